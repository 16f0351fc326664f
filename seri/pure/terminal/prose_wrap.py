"""An answer's prose wrapped by words at the terminal's width, as it streams in.

Left to the terminal, a long line is cut mid-word at the right edge and goes on at column 0,
under a list's bullet. So the styled spans of ``MarkdownStream`` pass through ``ProseWrap``,
which breaks a line between words before the width is reached, and starts a continuation
under the line's text: after a bullet or a number, at a plain line's indentation, behind a
quote's ``│`` (drawn again). Widths are columns (``cells``: a CJK character or an emoji takes
two). A word is held until it ends (a space, a line's end), so a piece of the stream that
ends inside a word does not break it: any chunking gives the same lines. A word wider than
the line is cut by columns. Code blocks (``code_block``, ``fence``) pass as they are.

The width is given with every piece, so a terminal resized mid-answer gets its new lines at
the new width. A tab in prose is shown as a space: the terminal would move it to a tab stop
whose column the wrapping cannot know.
"""

from __future__ import annotations

from seri.pure.terminal.cell_width import cells, grapheme_cells, graphemes
from seri.pure.terminal.terminal_style import Span, merged_spans

# Styles that open a line and put its text after them: a continuation goes on after them.
_MARKERS = frozenset({"bullet", "number", "quote"})
# Styles drawn as they are, never re-wrapped.
_VERBATIM = frozenset({"code_block", "fence"})
_SPACES = (" ", "\t")


class ProseWrap:
    """``feed(spans, width)`` as the answer comes, ``finish()`` at its end; each returns the
    spans to show, with the line breaks (and continuation indents) put in."""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._col = 0  # columns on the current shown line
        self._lead: list[Span] = []  # a line's bullet, number, quote or indentation, so far
        self._leading = True  # at a line's start, still in its lead
        self._prefix: list[Span] = []  # what a continuation line starts with
        self._spaces: list[Span] = []  # the spaces after the last word shown, held
        self._word: list[Span] = []  # the word being read, held until it ends

    def feed(self, spans: list[Span], width: int) -> list[Span]:
        width = max(width, 10)
        out: list[Span] = []
        for style, text in spans:
            if style in _VERBATIM:
                self._flush(out, width)
                self._verbatim(style, text, out)
                continue
            # A link's text is kept on one line when it can be: split, it would be two links.
            joined = style.startswith("link") and cells(text) <= width // 2
            for char in text:
                self._char(style, char, out, width, joined=joined)
        return merged_spans(out)

    def finish(self, width: int) -> list[Span]:
        """The end of the answer: the held word goes out, and the next answer starts afresh."""
        out: list[Span] = []
        self._flush(out, max(width, 10))
        self._reset()
        return merged_spans(out)

    # -- one character -------------------------------------------------------------------------

    def _char(self, style: str, char: str, out: list[Span], width: int, *, joined: bool) -> None:
        if char == "\n":
            self._flush(out, width)
            out.append(("", "\n"))
            self._col, self._leading, self._lead, self._prefix = 0, True, [], []
            return
        if self._leading:
            if _opens_line(style, char) and not joined:
                self._lead.append((style, " " if char == "\t" else char))
                return
            self._end_lead(out, width)
        if char in _SPACES and not joined:
            self._show_word(out)
            self._spaces.append((style, " "))
            return
        self._word.append((style, " " if char == "\t" else char))
        if self._col + _cells(self._spaces) + _cells(self._word) > width:
            self._overflow(out, width)

    def _end_lead(self, out: list[Span], width: int) -> None:
        """The line's text begins: its lead is shown, and tells where continuations start."""
        lead, self._lead, self._leading = self._lead, [], False
        for style, char in lead:
            self._put(style, char, out, width)
        self._prefix = _continuation(lead) if _cells(lead) <= width // 2 else []

    def _flush(self, out: list[Span], width: int) -> None:
        if self._leading and self._lead:
            self._end_lead(out, width)
            self._leading = True  # a line of nothing but its lead: still at its start
        self._show_word(out)
        self._spaces = []  # spaces at a line's end show nothing

    def _show_word(self, out: list[Span]) -> None:
        """The held word, after the held spaces, on this line (it fits, or it was cut)."""
        if not self._word:
            return
        shown = self._spaces + self._word
        out.extend(shown)
        self._col += _cells(shown)  # as a whole: a cluster measured apart may count wider
        self._spaces, self._word = [], []

    def _overflow(self, out: list[Span], width: int) -> None:
        """The held word does not fit after what the line has: it goes on the next line,
        and where it is wider than a whole line, the part that fills one goes out now."""
        if self._col > _cells(self._prefix) or self._spaces:
            self._spaces = []
            self._break(out)
        room = width - self._col
        if _cells(self._word) <= room:
            return
        word = "".join(char for _, char in self._word)
        kept, taken = 0, 0
        for cluster in graphemes(word):
            size = grapheme_cells(cluster)
            if taken + size > room and taken > 0:
                break
            taken += size
            kept += len(cluster)
        if taken > room and self._col > 0:  # one cluster wider than the room after the indent
            self._break_bare(out)
            self._overflow(out, width)
            return
        shown, self._word = self._word[:kept], self._word[kept:]
        for style, char in shown:
            out.append((style, char))
        self._col += taken
        self._break(out)
        if _cells(self._word) > width - self._col:
            self._overflow(out, width)

    def _put(self, style: str, char: str, out: list[Span], width: int) -> None:
        """One character that must go out now, on a new line if this one is full."""
        size = cells(char)
        if self._col + size > width and self._col > 0:
            self._break_bare(out)
        out.append((style, char))
        self._col += size

    def _break(self, out: list[Span]) -> None:
        out.append(("", "\n"))
        out.extend(self._prefix)
        self._col = _cells(self._prefix)

    def _break_bare(self, out: list[Span]) -> None:
        out.append(("", "\n"))
        self._col = 0

    def _verbatim(self, style: str, text: str, out: list[Span]) -> None:
        out.append((style, text))
        if "\n" in text:
            self._col, self._leading, self._lead, self._prefix = 0, True, [], []
            text = text.rsplit("\n", 1)[1]
        self._col += cells(text)


def _opens_line(style: str, char: str) -> bool:
    """Whether a character at a line's start is of its lead: indentation, a bullet or a
    number, a quote's bar (a quote's text has the quote's style too)."""
    return char in _SPACES or style in ("bullet", "number") or (style == "quote" and char == "│")


def _continuation(lead: list[Span]) -> list[Span]:
    """A continuation's start: a quote's ``│`` again, a bullet or number as blank columns."""
    return [
        (style, text) if style == "quote" or style not in _MARKERS else ("", " " * cells(text))
        for style, text in merged_spans(lead)
    ]


def _cells(spans: list[Span]) -> int:
    return cells("".join(text for _, text in spans))
