"""Aligned plain-text tables for people (scripts use --json instead)."""

from __future__ import annotations

from collections.abc import Sequence

from seri.pure.terminal.terminal_text import one_line


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the last column is never padded.

    A table is for people: every cell is made safe for a terminal (stored text can hold
    escape sequences) and kept on its row (a newline in a cell would forge rows of its
    own); machine output (``--json``) does not come through here.
    """
    headers = [one_line(h) for h in headers]
    rows = [[one_line(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = []
    for row in (headers, *rows):
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)
