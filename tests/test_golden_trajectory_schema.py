"""The trajectory's one schema, documented once: the records of seri/pure/events.py make
tests/golden/trajectory_schema.json and the README's table of event types, and these tests
fail when either has drifted from the records (``make golden`` rewrites both; review the diff).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from seri.pure.trajectory_schema import event_schema, schema_table
from tests.golden_files import check_golden

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "tests" / "golden" / "trajectory_schema.json"
README = REPO / "README.md"
BEGIN = "<!-- event-schema: begin (make golden writes this part from seri/pure/events.py) -->\n"
END = "<!-- event-schema: end -->\n"


def test_golden_trajectory_schema_file_is_made_from_the_records() -> None:
    check_golden(SCHEMA, json.dumps(event_schema(), indent=2, ensure_ascii=False) + "\n")


def test_golden_readme_event_table_is_made_from_the_records() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "the README's markers are missing"
    head, rest = text.split(BEGIN)
    shown, tail = rest.split(END)
    table = schema_table()
    if os.environ.get("SERI_REGEN_GOLDEN") == "1":
        README.write_text(head + BEGIN + table + END + tail, encoding="utf-8")
        return
    assert shown == table, "README's event table differs from seri/pure/events.py: make golden"
