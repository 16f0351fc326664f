"""Seri's own colours: named styles, and the only place escape sequences are made.

Every piece of text goes through ``neutralise`` before a style is put around it, so the
only escape sequences on the screen are the ones made here. With colour off (``NO_COLOR``,
not a terminal, ``TERM=dumb``) the same calls give the plain text.
"""

from __future__ import annotations

from collections.abc import Iterable

from seri.pure.terminal.cell_width import cells, grapheme_cells, graphemes
from seri.pure.terminal.terminal_text import neutralise

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
    "link": "4",
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


# OSC 8: the text between the two is a hyperlink to the URL (terminals that know it).
_LINK_OPEN = "\x1b]8;;{}\x1b\\"
_LINK_CLOSE = "\x1b]8;;\x1b\\"
_LINK_SCHEMES = ("http://", "https://", "mailto:")


def hyperlink_target(url: str) -> bool:
    """Whether ``url`` may be put in an OSC 8 hyperlink: a web or mail address of printable
    ASCII with no spaces (nothing in it can end the escape sequence early)."""
    printable = url.isascii() and all(0x21 <= ord(c) <= 0x7E for c in url)
    return printable and url.lower().startswith(_LINK_SCHEMES)


def paint_link(text: str, url: str, *, colour: bool) -> str:
    """``text`` as a hyperlink to ``url`` (a ``link URL`` span; made only for terminals
    that support OSC 8); without colour, or for a URL unfit for one, the text alone."""
    shown = paint(text, "link", colour=colour)
    if not colour or not hyperlink_target(url) or not shown:
        return shown
    return _LINK_OPEN.format(url) + shown + _LINK_CLOSE


def paint_spans(spans: Iterable[Span], *, colour: bool) -> str:
    return "".join(
        paint_link(text, style[5:], colour=colour)
        if style.startswith("link ")
        else paint(text, style, colour=colour)
        for style, text in spans
    )


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
        if cells(text) <= width:
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
    """``line`` broken into rows of at most ``width`` columns (a wide character counts
    two); each row after the first starts with ``hanging``."""
    if cells(hanging) > width // 2:
        hanging = ""
    clusters = [(style, c, grapheme_cells(c)) for style, part in line for c in graphemes(part)]
    text = "".join(c for _, c, _ in clusters)
    # Prose breaks between words; a diff or a command's output where the width ends.
    by_words = not text.lstrip(" ").startswith(_MARKERS)
    starts, dropped = _row_starts(clusters, width, width - cells(hanging), by_words)
    out: list[Span] = []
    for index, (style, cluster, _) in enumerate(clusters):
        if index in dropped:
            continue  # the space a row was broken at
        if index in starts:
            out.append(("", "\n" + hanging))
        out.append((style, cluster))
    return merged_spans(out)


def _row_starts(
    clusters: list[tuple[str, str, int]], first: int, rest: int, by_words: bool
) -> tuple[set[int], set[int]]:
    """Where each row after the first starts (an index into ``clusters``), and the spaces
    dropped where a row was broken between words."""
    starts: set[int] = set()
    dropped: set[int] = set()
    row, used, room, index = 0, 0, first, 0
    while index < len(clusters):
        size = clusters[index][2]
        if used + size <= room or index == row:
            used += size
            index += 1
            continue
        # clusters[index] does not fit: break at the last space of the row past its middle.
        cut, filled = index, used
        space = -1
        for back in range(index, row, -1):
            if back < index:
                filled -= clusters[back][2]
            if filled < room // 2:
                break
            if by_words and clusters[back][1] == " ":
                space = back
                break
        if space > row:
            dropped.add(space)
            cut = space + 1
        if cut >= len(clusters):
            break
        starts.add(cut)
        row, used, room, index = cut, 0, rest, cut
    return starts, dropped


def merged_spans(spans: Iterable[Span]) -> list[Span]:
    """Neighbouring pieces of one style joined (one escape sequence per run, not per char),
    empty ones dropped."""
    out: list[Span] = []
    for style, text in spans:
        if not text:
            continue
        if out and out[-1][0] == style:
            out[-1] = (style, out[-1][1] + text)
        else:
            out.append((style, text))
    return out
