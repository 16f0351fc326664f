"""The one results table, as aligned text for the terminal and as Markdown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

HEADERS = ("#", "what", "seri", "peer / floor (same run)", "target", "met")


@dataclass(frozen=True)
class Row:
    group: str
    what: str
    seri: str
    peer: str
    target: str
    met: str  # "yes", "no", or "n/a" (no target, or nothing to compare with)


def met(ok: bool | None) -> str:
    return "n/a" if ok is None else "yes" if ok else "no"


def met_wall(wall_ok: bool, cpu_ok: bool) -> str:
    """The verdict on wall time, saying so when CPU time alone would have met it.

    On a loaded machine wall time includes waiting for a core; CPU time does not.
    """
    if wall_ok:
        return "yes"
    return "no (cpu: yes)" if cpu_ok else "no"


def _cells(row: Row) -> tuple[str, ...]:
    return (row.group, row.what, row.seri, row.peer, row.target, row.met)


def render_text(rows: Sequence[Row], notes: Sequence[str] = ()) -> str:
    table = [HEADERS, *(_cells(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADERS))]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(width) for cell, width in zip(cells, widths, strict=True)
        ).rstrip()

    out = [line(HEADERS), line(["-" * w for w in widths])]
    out.extend(line(_cells(row)) for row in rows)
    out.extend(["", *notes])
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(rows: Sequence[Row], title: str, notes: Sequence[str] = ()) -> str:
    out = [f"# {title}", "", "| " + " | ".join(HEADERS) + " |"]
    out.append("|" + "|".join(" --- " for _ in HEADERS) + "|")
    out.extend("| " + " | ".join(_md(c) for c in _cells(row)) + " |" for row in rows)
    if notes:
        out.append("")
        out.extend(f"- {_md(note)}" for note in notes)
    return "\n".join(out) + "\n"
