"""The table of real captures (tests/captures/README.md), made from captures.json.

    python -m tests.captures.table > tests/captures/README.md

tests/unit/provider/test_real_captures.py replays every row and checks the README is this output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parent / "captures.json"

HEAD = """# Real provider captures, replayed

Streams, error bodies, overflow messages, usage objects and model listings that real
providers and servers sent, each with where it was found. `tests/unit/provider/test_real_captures.py`
replays every one: HTTP bodies and SSE streams through seri's real client over loopback
(`scripts/fake_model.py` serving the bytes), messages and listings through the pure readers.

"Verbatim" means the bytes or text are as published; otherwise the note says what was
converted (a Python repr to JSON, a message put in its provider's envelope) or which numbers
are ours. Regenerate with `python -m tests.captures.table > tests/captures/README.md`.

| # | capture | source | verbatim | what seri does |
| --- | --- | --- | --- | --- |
"""  # noqa: E501


def load() -> list[dict[str, Any]]:
    captures: list[dict[str, Any]] = json.loads(CAPTURES.read_text())["captures"]
    return captures


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    rows = []
    for number, capture in enumerate(load(), start=1):
        verbatim = "yes" if capture["verbatim"] else f"no: {capture.get('note', '')}"
        rows.append(
            f"| {number} | `{capture['id']}` ({capture['transport']}) | "
            f"{_cell(capture['source'])} | {_cell(verbatim)} | {_cell(capture['seri_does'])} |"
        )
    return HEAD + "\n".join(rows) + "\n"


if __name__ == "__main__":
    print(render(), end="")
