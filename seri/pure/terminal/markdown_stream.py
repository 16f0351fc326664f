"""Markdown answers rendered for a terminal as they stream in.

A model answer arrives a few characters at a time, and a person should see it as it comes,
not a paragraph later. So this renders as much as can be decided: a line's start is held
back only until its kind is known (a heading, a list item, a quote, a code fence), then
its text flows out character by character; inline ``code`` and **bold** switch style at
their markers. Code blocks keep their text exactly (indentation, no inline markup).

What it changes, for colour terminals only (without colour the answer is shown as
written): heading hashes go (the heading is bold), ``-``/``*``/``+`` bullets become ``•``,
fence lines become a dim rule naming the language, and the backticks and asterisks of
inline spans go. Feeding the same text in any chunks gives the same spans.
"""

from __future__ import annotations

import re

from seri.pure.inputs.lazy_pattern import LazyPattern
from seri.pure.terminal.terminal_style import Span, hyperlink_target, merged_spans

# Line starts that may still turn out to be a block marker, given more characters.
_UNDECIDED = LazyPattern(r"[ \t]*(?:#{1,6}|[-*+]|\d{1,9}\.?|>|`{1,2}|~{1,2})?")
_HEADING = LazyPattern(r"([ \t]*)(#{1,6})[ \t]")
_BULLET = LazyPattern(r"([ \t]*)([-*+])[ \t]")
_NUMBER = LazyPattern(r"([ \t]*)(\d{1,9}\.)[ \t]")
_QUOTE = LazyPattern(r"([ \t]*)>[ \t]?")
_FENCE = LazyPattern(r"[ \t]*(`{3,}|~{3,})")
_RULE_WIDTH = 24


class MarkdownStream:
    """Feed text with ``feed``, end with ``finish``; each returns the spans to show.

    With ``hyperlinks`` (a terminal known to support OSC 8) a link's text is the link;
    without, the text is followed by its URL in parentheses, as rich and glow show it.
    """

    def __init__(self, hyperlinks: bool = False) -> None:
        self.hyperlinks = hyperlinks
        self._reset()

    def _reset(self) -> None:
        self._start = ""  # the current line's undecided beginning
        self._line_kind = ""  # "" while undecided, else the block kind of this line
        self._fence = ""  # the open code fence's marker, "" outside code blocks
        self._code = False  # inside an inline `code` span
        self._bold = False
        self._italic = False
        self._star = False  # a "*" held back: the first half of "**", or an *italic*?
        self._base = ""  # the style of the current line's ordinary text
        self._link: str | None = None  # a "[text](url" held back until it is known a link

    def feed(self, text: str) -> list[Span]:
        out: list[Span] = []
        for char in text:
            self._char(char, out)
        return merged_spans(out)

    def finish(self) -> list[Span]:
        """The end of the answer: whatever was held back goes out as it stands."""
        out: list[Span] = []
        if not self._line_kind and self._start:
            start, self._start = self._start, ""
            self._decide(start, out, at_end=True)
        if self._line_kind == "fence_line":
            self._fence_line(self._start, out)
        while self._link is not None:  # given back, it may hold the start of another
            self._not_a_link("", out)
        if self._star:
            out.append((self._inline_style(), "*"))
        self._reset()  # ready for the next answer
        return merged_spans(out)

    # -- one character -------------------------------------------------------------------------

    def _char(self, char: str, out: list[Span]) -> None:
        if not self._line_kind:
            self._start += char
            if char == "\n" or not self._still_undecided():
                start, self._start = self._start, ""
                self._decide(start, out, at_end=char == "\n")
            return
        if self._line_kind == "fence_line":
            self._start += char
            if char == "\n":
                self._fence_line(self._start, out)
            return
        if char == "\n":
            self._end_line(out)
            return
        if self._line_kind == "code":
            out.append(("code_block", char))
            return
        self._inline(char, out)

    def _still_undecided(self) -> bool:
        start = self._start
        if self._fence:
            # In a code block only the closing fence matters.
            return bool(re.fullmatch(r"[ \t]*[`~]{0,3}", start)) or bool(_FENCE.fullmatch(start))
        if _FENCE.fullmatch(start):
            return True
        return bool(_UNDECIDED.fullmatch(start))

    def _decide(self, start: str, out: list[Span], *, at_end: bool) -> None:
        """The line's beginning is known (or the line ended): pick its kind and show it."""
        fence = _FENCE.match(start)
        if fence and (not self._fence or fence.group(1)[0] == self._fence[0]):
            self._line_kind = "fence_line"
            self._start = start
            if at_end:
                self._fence_line(start, out)
            return
        if self._fence:
            self._line_kind = "code"
            self._replay(start, out)
            return
        rest = start
        for pattern, kind in ((_HEADING, "heading"), (_BULLET, "bullet"), (_NUMBER, "number")):
            match = pattern.match(start)
            if match:
                indent = match.group(1)
                if kind == "heading":
                    self._base = "heading"
                elif kind == "bullet":
                    out.append(("bullet", f"{indent}• "))
                else:
                    out.append(("number", f"{indent}{match.group(2)} "))
                rest = start[match.end() :]
                break
        else:
            match = _QUOTE.match(start)
            if match and start.strip() != "":
                out.append(("quote", f"{match.group(1)}│ "))
                self._base = "quote"
                rest = start[match.end() :]
        self._line_kind = "text"
        self._replay(rest, out)

    def _replay(self, text: str, out: list[Span]) -> None:
        for char in text:
            self._char(char, out)

    def _fence_line(self, line: str, out: list[Span]) -> None:
        match = _FENCE.match(line)
        assert match is not None
        marker = match.group(1)
        label = line[match.end() :].strip()
        closing = self._fence and marker[0] == self._fence[0] and len(marker) >= len(self._fence)
        if closing and not label:
            self._fence = ""
            out.append(("fence", "─" * _RULE_WIDTH + ("\n" if line.endswith("\n") else "")))
            self._new_line()
            return
        if self._fence:
            # Not a closing fence after all: a line of the code block.
            out.append(("code_block", line))
            self._new_line()
            return
        self._fence = marker
        title = f"─── {label} " if label else "───"
        out.append(("fence", title.ljust(_RULE_WIDTH, "─") + ("\n" if line.endswith("\n") else "")))
        self._new_line()

    def _end_line(self, out: list[Span]) -> None:
        while self._link is not None:  # given back, it may hold the start of another
            self._not_a_link("", out)
        if self._star:
            out.append((self._inline_style(), "*"))
        out.append(("", "\n"))
        self._new_line()

    def _new_line(self) -> None:
        self._start = ""
        self._line_kind = ""
        self._code = False
        self._bold = False
        self._italic = False
        self._star = False
        self._base = ""
        self._link = None

    # -- inline spans --------------------------------------------------------------------------

    def _inline_style(self) -> str:
        if self._code:
            return "code"
        if self._bold:
            return "bold"
        if self._italic:
            return "italic"
        return self._base

    def _inline(self, char: str, out: list[Span]) -> None:
        if self._link is not None:
            self._link_char(char, out)
            return
        if self._star:
            self._star = False
            if char == "*" and not self._code:
                self._bold = not self._bold
                return
            if not self._code and (self._italic or not char.isspace()):
                # One star: *italic* opens before a word and closes after one.
                self._italic = not self._italic
            else:
                out.append((self._inline_style(), "*"))
        if char == "`":
            self._code = not self._code
            return
        if char == "*" and not self._code:
            self._star = True
            return
        if char == "[" and not self._code:
            self._link = char
            return
        out.append((self._inline_style(), char))

    # -- links ---------------------------------------------------------------------------------

    def _link_char(self, char: str, out: list[Span]) -> None:
        """One more character of a possible ``[text](url)``: held, shown as a link once the
        ``)`` comes, or given back as the text it was when it turns out not to be one."""
        held = self._link or ""
        closed = held.find("](")
        if closed < 0:
            if held.endswith("]"):
                if char == "(":
                    self._link = held + char
                else:
                    self._not_a_link(char, out)
            elif char == "[" or len(held) > _LINK_TEXT_LIMIT:
                self._not_a_link(char, out)
            else:
                self._link = held + char
            return
        if char == ")":
            self._link = None
            self._show_link(held[1:closed], held[closed + 2 :], out)
        elif char.isspace() or len(held) - closed > _LINK_URL_LIMIT:
            self._not_a_link(char, out)
        else:
            self._link = held + char

    def _not_a_link(self, char: str, out: list[Span]) -> None:
        held, self._link = (self._link or "") + char, None
        out.append((self._inline_style(), held[0]))  # the "[", as written
        self._replay_inline(held[1:], out)

    def _replay_inline(self, text: str, out: list[Span]) -> None:
        for char in text:
            self._inline(char, out)

    def _show_link(self, text: str, url: str, out: list[Span]) -> None:
        shown = text.replace("`", "").replace("**", "") or url
        if self.hyperlinks and hyperlink_target(url):
            out.append((f"link {url}", shown))
            return
        out.append(("link", shown))
        if url and url != shown:
            out.append(("notice", f" ({url})"))


# A "[" opens at most this much link text, and "](" this much URL, before it is given back.
_LINK_TEXT_LIMIT = 500
_LINK_URL_LIMIT = 2000


def render_markdown(text: str) -> list[Span]:
    """A whole answer at once (a replayed exchange, ``-p`` on a terminal)."""
    stream = MarkdownStream()
    return merged_spans([*stream.feed(text), *stream.finish()])
