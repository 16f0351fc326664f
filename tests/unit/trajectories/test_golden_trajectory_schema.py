"""The trajectory's one schema, documented once: the records of seri/pure/trajectories/events.py
make tests/golden/trajectory_schema.json and the table of event types in
docs/trajectory-export-schema.md, and these tests
fail when either has drifted from the records (``make golden`` rewrites both; review the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from seri.pure.trajectories.trajectory_schema import event_schema, schema_table
from tests.golden_files import check_golden

REPO = Path(__file__).resolve().parents[3]
SCHEMA = REPO / "tests" / "golden" / "trajectory_schema.json"
SCHEMA_DOC = REPO / "docs" / "trajectory-export-schema.md"
BEGIN = "<!-- event-schema: begin (make golden writes this part from seri/pure/trajectories/events.py) -->\n"  # noqa: E501
END = "<!-- event-schema: end -->\n"


def test_golden_trajectory_schema_file_is_made_from_the_records() -> None:
    check_golden(SCHEMA, json.dumps(event_schema(), indent=2, ensure_ascii=False) + "\n")


def test_golden_readme_event_table_is_made_from_the_records() -> None:
    text = SCHEMA_DOC.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "the schema doc's markers are missing"
    head, rest = text.split(BEGIN)
    shown, tail = rest.split(END)
    table = schema_table()
    if os.environ.get("SERI_REGEN_GOLDEN") == "1":
        SCHEMA_DOC.write_text(head + BEGIN + table + END + tail, encoding="utf-8")
        return
    assert shown == table, (
        "the event table in docs/ differs from seri/pure/trajectories/events.py: make golden"
    )
