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
    "italic": "3",
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


# What starts a line's content after its indent: a rule of folded output, a diff's sign.
_MARKERS = ("│ ", "+", "-", "@@")


def wrap_spans(spans: Iterable[Span], width: int) -> list[Span]:
    """``spans`` with every line longer than ``width`` broken, each piece after the first
    starting at the column where the line's content starts (under its indent, its ``│``,
    its diff sign), so that a narrow terminal does not wrap it back to column 0."""
    return _wrap_lines(_lines_of(spans), max(width, 20))


def _lines_of(spans: Iterable[Span]) -> list[tuple[list[Span], bool]]:
    """The spans cut into lines; each with whether it ended in a newline."""
    lines: list[tuple[list[Span], bool]] = []
    current: list[Span] = []
    for style, text in spans:
        parts = text.split("\n")
        for index, part in enumerate(parts):
            if part:
                current.append((style, part))
            if index < len(parts) - 1:
                lines.append((current, True))
                current = []
    if current:
        lines.append((current, False))
    return lines


def _wrap_lines(lines: list[tuple[list[Span], bool]], width: int) -> list[Span]:
    out: list[Span] = []
    for line, ended in lines:
        text = "".join(part for _, part in line)
        if len(text) <= width:
            out += line
        else:
            out += _wrapped(line, _hanging_indent(text), width)
        if ended:
            out.append(("", "\n"))
    return out


def _hanging_indent(text: str) -> str:
    """Spaces as wide as the line's indent and its marker (a rule ``│`` is repeated)."""
    stripped = text.lstrip(" ")
    indent = " " * (len(text) - len(stripped))
    for marker in _MARKERS:
        if stripped.startswith(marker):
            return indent + (marker if marker == "│ " else " " * len(marker))
    return indent


def _wrapped(line: list[Span], hanging: str, width: int) -> list[Span]:
    if len(hanging) > width // 2:
        hanging = ""
    text = "".join(part for _, part in line)
    # Prose breaks between words; a diff or a command's output where the width ends.
    by_words = not text.lstrip(" ").startswith(_MARKERS)
    cuts: list[tuple[int, int]] = []  # (end of a piece, start of the next)
    start, room = 0, width
    while len(text) - start > room:
        end = start + room
        space = text.rfind(" ", start + room // 2, end + 1) if by_words else -1
        cuts.append((space, space + 1) if space > start else (end, end))
        start = cuts[-1][1]
        room = width - len(hanging)
    out: list[Span] = []
    position = 0
    for style, part in line:
        for index, char in enumerate(part):
            at = position + index
            for end, resume in cuts:
                if at == end:
                    out.append(("", "\n" + hanging))
                if end <= at < resume:
                    break
            else:
                out.append((style, char))
        position += len(part)
    return _merged(out)


def _merged(spans: list[Span]) -> list[Span]:
    """Neighbouring pieces of one style joined (one escape sequence per run, not per char)."""
    out: list[Span] = []
    for style, text in spans:
        if out and out[-1][0] == style:
            out[-1] = (style, out[-1][1] + text)
        else:
            out.append((style, text))
    return out
