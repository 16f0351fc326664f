"""How many terminal columns text takes: a CJK character or an emoji takes two, a
combining accent none, an emoji joined with ZWJ one glyph's two.

Wrapping and cutting by ``len`` is right only for ASCII: a line of Japanese cut at 60
characters is 120 columns wide, and the terminal wraps it again at column 0. The widths
are wcwidth's (the library prompt_toolkit measures the prompt with), per grapheme cluster,
so a cut never splits an accent from its letter or a family emoji into its members.
ASCII text, most of what seri shows, is measured by ``len`` without importing wcwidth.
"""

from __future__ import annotations

from collections.abc import Iterator

from seri.pure.terminal.terminal_text import neutralise


def cells(text: str) -> int:
    """The columns ``text`` takes once shown (neutralised: a control as its stand-in)."""
    if text.isascii():
        return len(neutralise(text))
    return sum(grapheme_cells(cluster) for cluster in graphemes(text))


def graphemes(text: str) -> Iterator[str]:
    """``text`` as the clusters a terminal draws as one glyph each."""
    if text.isascii():
        yield from text  # in ASCII every character is a cluster but CR LF: "\r" shows as nothing
        return
    from wcwidth import iter_graphemes

    yield from iter_graphemes(text)


def grapheme_cells(cluster: str) -> int:
    shown = neutralise(cluster)
    if shown != cluster or cluster.isascii():
        return len(shown)  # a stand-in (␛, \x9b, <U+202E>) is narrow characters
    from wcwidth import width

    return max(0, width(cluster))


def clip(text: str, columns: int) -> str:
    """``text`` cut to at most ``columns`` columns, "…" at the end when it was cut."""
    if cells(text) <= columns:
        return text
    room, kept = max(0, columns - 1), []
    for cluster in graphemes(text):
        size = grapheme_cells(cluster)
        if size > room:
            break
        kept.append(cluster)
        room -= size
    return "".join(kept) + "…"
