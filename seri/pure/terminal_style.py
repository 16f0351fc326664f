"""Seri's own colours: named styles, and the only place escape sequences are made.

Every piece of text goes through ``neutralise`` before a style is put around it, so the
only escape sequences on the screen are the ones made here. With colour off (``NO_COLOR``,
not a terminal, ``TERM=dumb``) the same calls give the plain text.
"""

from __future__ import annotations

from collections.abc import Iterable

from seri.pure.terminal_text import neutralise

# Select Graphic Rendition parameters per style name.
SGR: dict[str, str] = {
    "": "",
    "bold": "1",
    "dim": "2",
    "user": "1;36",
    "prompt": "1;36",
    "ok": "32",
    "error": "31",
    "denied": "33",
    "warning": "33",
    "notice": "2",
    "add": "32",
    "delete": "31",
    "hunk": "36",
    "heading": "1",
    "bullet": "33",
    "number": "33",
    "code": "36",
    "code_block": "36",
    "fence": "2",
    "quote": "2",
    "rule": "2",
    "tool": "1",
    "spinner": "36",
}

RESET = "\x1b[0m"

Span = tuple[str, str]  # (style, text)


def paint(text: str, style: str, *, colour: bool) -> str:
    """``text`` made safe, and wrapped in ``style``'s colour when colour is on.

    Styles end at each newline and start again after it, so that a line cut out of the
    output (a pager, a terminal that scrolls) never leaks a colour onto the next one.
    """
    safe = neutralise(text)
    code = SGR.get(style, "")
    if not colour or not code or not safe:
        return safe
    start = f"\x1b[{code}m"
    return "\n".join(f"{start}{line}{RESET}" if line else "" for line in safe.split("\n"))


def paint_spans(spans: Iterable[Span], *, colour: bool) -> str:
    return "".join(paint(text, style, colour=colour) for style, text in spans)
