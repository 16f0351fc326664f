"""One line per tool call, saying what it did, as a person scanning the screen wants it.

    ✓ bash  pytest -q
      │ 3 passed in 0.12s
    ✗ edit  src/app.py: old_string not found in src/app.py …
    ⊘ write_file  .git/hooks/pre-commit: denied by rule (protected)
    ✓ edit  src/app.py  +3 −1

A mark (ok, error, denied), the tool, its main argument, and what matters of the outcome:
the reason of an error or a denial, an edit's added and removed lines, the last lines of a
command's output (the rest is one ``/last`` away).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from seri.pure.inputs import json_text
from seri.pure.terminal.terminal_style import Span

Mark = Literal["ok", "error", "denied", "interrupted"]

MARKS: dict[Mark, tuple[str, str]] = {
    "ok": ("✓", "ok"),
    "error": ("✗", "error"),
    "denied": ("⊘", "denied"),
    "interrupted": ("✗", "error"),
}
OUTPUT_TAIL_LINES = 4
SUBJECT_KEYS = ("command", "path", "pattern", "description")
_STATUS_PREFIXES = ("[exit code ", "[timed out after", "[killed by signal")
# The capture's note where it left the middle of a long output out (seri.pure.tools.output_capture).
_OMITTED = re.compile(r"\[… \d+ bytes / (\d+) lines omitted of ")


def parsed_arguments(text: str) -> dict[str, object]:
    """A call's arguments as the object they should be; {} when they are not one."""
    try:
        value = json_text.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past any real argument
        return {}
    return value if isinstance(value, dict) else {}


def call_subject(arguments: Mapping[str, object]) -> str:
    """The argument a person recognises a call by: the command, the path, the pattern."""
    for key in SUBJECT_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return " ".join(value.split())
    return ""


def _cells(text: str) -> int:
    from seri.pure.terminal.cell_width import cells

    return cells(text)


def _clip(text: str, width: int) -> str:
    """At most ``width`` columns of ``text`` (a CJK character or an emoji is two)."""
    if text.isascii():
        return text if len(text) <= width else text[: max(1, width - 1)] + "…"
    from seri.pure.terminal.cell_width import clip

    return clip(text, max(1, width))


def tool_line(
    mark: Mark,
    tool: str,
    arguments: Mapping[str, object],
    *,
    detail: str = "",
    changes: tuple[int, int] | None = None,
    width: int = 100,
) -> list[Span]:
    """The call's line: mark, tool, subject, and a detail (a reason, ``+N −M``)."""
    symbol, style = MARKS[mark]
    subject = call_subject(arguments)
    head = f"{symbol} {tool}"
    spans: list[Span] = [(style, symbol), ("tool", f" {tool}")]
    room = width - len(head) - 2
    if changes is not None:
        added, removed = changes
        tail = f"  +{added} −{removed}"
        room -= len(tail)
    if subject:
        shown = _clip(subject, max(10, room if not detail else min(room, 60)))
        spans.append(("", f"  {shown}"))
        room -= (len(shown) if shown.isascii() else _cells(shown)) + 2
    if changes is not None:
        added, removed = changes
        spans += [("", "  "), ("add", f"+{added}"), ("", " "), ("delete", f"−{removed}")]
    if detail:
        first = detail.strip().split("\n", 1)[0]
        spans.append((style if mark != "ok" else "notice", f": {_clip(first, max(20, room))}"))
    spans.append(("", "\n"))
    return spans


def output_tail(
    text: str, *, lines: int = OUTPUT_TAIL_LINES, width: int = 100, last: str = "/last"
) -> list[Span]:
    """The last lines of a command's output, folded under its tool line.

    ``text`` is the bash tool's result: output, notes in brackets, and a last status line
    (``[exit code 1]``); the status is left out (the mark says it), a progress bar redrawn
    with carriage returns shows as its final state. The count of lines not shown includes
    those the capture left out of the middle (``seq 1 40000``: 39,996 more, not 1,997).
    ``last`` is the command that shows this very output whole.
    """
    body = _output_lines(text)
    if not body:
        return []
    omitted = 0
    for index, line in enumerate(body):
        gap = _OMITTED.match(line)
        if gap is not None:
            omitted += int(gap.group(1))
            del body[index]
            break
    shown = body[-lines:]
    spans: list[Span] = []
    hidden = len(body) - len(shown) + omitted
    if hidden:
        more = f"{hidden:,} more line" + ("" if hidden == 1 else "s")
        spans.append(("notice", f"  │ … {more} ({last} shows them)\n"))
    spans += [("notice", f"  │ {_clip(line, width - 4)}\n") for line in shown]
    return spans


LIVE_LINES = 3


def live_lines(raw: bytes, *, count: int = LIVE_LINES, width: int = 100) -> tuple[str, ...]:
    """The last lines of a command's output while it runs, made safe and cut to ``width``
    (a wrapped line would push the spinner off its place). ``raw`` is the tail of the
    output so far; its first line may be cut, so it is shown only when it is all there is."""
    from seri.pure.terminal.terminal_text import neutralise

    text = raw.decode("utf-8", "replace").expandtabs()
    lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    shown = lines[-count:]
    return tuple(_clip(neutralise(line), max(1, width)) for line in shown)


def _output_lines(text: str) -> list[str]:
    # A line redrawn with carriage returns (a progress bar) shows as its final state.
    lines = [line.rstrip("\r").rsplit("\r", 1)[-1] for line in text.split("\n")]
    if lines and lines[-1].startswith(_STATUS_PREFIXES):
        lines.pop()
    while lines and not lines[-1].strip():
        lines.pop()
    if lines == ["(no output)"]:
        return []
    return lines


def exit_detail(text: str) -> str:
    """``exit code 1`` (or the timeout, the signal) from the bash result's last line."""
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    if last.startswith(_STATUS_PREFIXES) and last.endswith("]"):
        return last[1:-1]
    return ""
