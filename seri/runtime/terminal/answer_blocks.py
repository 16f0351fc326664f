"""An answer on a colour terminal: streamed as it comes, with tables and code blocks drawn
by rich (a box-drawn table, code highlighted by Pygments) once each block is complete.

Most of an answer flows out character by character through ``MarkdownStream``; a table
(lines starting with ``|``) or a fenced code block is held until it ends, because neither
can be drawn before its last line is known, then rendered by rich. rich (~0.3 s to import
on the 2-core machine) is loaded only when an answer has such a block, in a thread started
as soon as the block begins, so the import overlaps the block's streaming.

The model's text is neutralised before rich sees it: the only escape sequences written
are rich's own styling.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from seri.pure.terminal.markdown_stream import MarkdownStream
from seri.pure.terminal.terminal_text import neutralise

if TYPE_CHECKING:
    from seri.pure.terminal.terminal_style import Span

# What an answer's renderer gives the screen: styled spans, or text rich has styled.
Piece = tuple[str, "list[Span] | str"]
_FENCES = ("```", "~~~")


class AnswerBlocks:
    def __init__(self, width: int = 100, hyperlinks: bool = False) -> None:
        self.width = width
        self.hyperlinks = hyperlinks
        self._stream = MarkdownStream(hyperlinks)
        self._line = ""  # the current line's start, while its kind is not known
        self._kind = ""  # "" at a line's start, "text", "table" or "code"
        self._held: list[str] = []  # the lines of a table or code block being held
        self._fence = ""

    def feed(self, text: str) -> list[Piece]:
        out: list[Piece] = []
        for char in text:
            self._char(char, out)
        return out

    def finish(self) -> list[Piece]:
        out: list[Piece] = []
        if self._line:
            line, self._line = self._line, ""
            if self._kind in ("", "text"):
                out.append(("spans", self._stream.feed(line)))
            else:
                self._held.append(line)
        self._flush(out)
        out.append(("spans", self._stream.finish()))
        self._kind = ""
        return out

    def _char(self, char: str, out: list[Piece]) -> None:
        if self._kind == "text":
            out.append(("spans", self._stream.feed(char)))
            if char == "\n":
                self._kind = ""
            return
        self._line += char
        if self._kind in ("table", "code"):
            if char == "\n":
                self._held_line(out)
            return
        kind = _line_kind(self._line, self._held_kind())
        if kind is None:
            return
        if self._held and kind != "table":
            self._flush(out)
        self._kind = kind
        if kind == "text":
            line, self._line = self._line, ""
            out.append(("spans", self._stream.feed(line)))
            if line.endswith("\n"):
                self._kind = ""
            return
        _load_rich_behind()
        if kind == "code" and not self._held:
            self._fence = self._line.lstrip()[:3]
        if char == "\n":
            self._held_line(out)

    def _held_kind(self) -> str:
        return "code" if self._fence else ("table" if self._held else "")

    def _held_line(self, out: list[Piece]) -> None:
        line, self._line = self._line, ""
        self._held.append(line)
        closing = line.strip().startswith(self._fence) and len(self._held) > 1
        if self._kind == "code" and closing:
            self._flush(out)
        self._kind = "code" if self._fence else ""

    def _flush(self, out: list[Piece]) -> None:
        if not self._held:
            return
        block, self._held = "".join(self._held), []
        self._fence = ""
        out.append(("rich", render_block(block, self.width, self.hyperlinks)))


def _line_kind(start: str, holding: str) -> str | None:
    """What a line is, from its start: None while it could still be either."""
    if holding == "code":
        return "code"
    stripped = start.lstrip(" ")
    body = stripped.rstrip("\n")
    ended = start.endswith("\n")
    if not body:
        return "text" if ended else None
    if body[0] == "|":
        return "table"
    if body.startswith(_FENCES):
        return "code"
    if set(body) <= {"`"} or set(body) <= {"~"}:
        return "text" if ended else None  # `` could still become a fence
    return "text"


# The thread importing rich, once one was started.
_RICH_LOADING: list[threading.Thread] = []


def _load_rich_behind() -> None:
    """Import rich in a thread now: the block it will draw is still streaming. Not a daemon,
    so that an exit meanwhile waits for the import (``http_client.load_in_background``)."""
    if not _RICH_LOADING:
        _RICH_LOADING.append(threading.Thread(target=_import_rich, name="seri-rich", daemon=False))
        _RICH_LOADING[0].start()


def _import_rich() -> None:
    import importlib

    for module in ("rich.console", "rich.markdown", "rich.syntax"):
        importlib.import_module(module)


def render_block(block: str, width: int, hyperlinks: bool = False) -> str:
    """A table or code block as rich draws it, for a 256-colour terminal (a link in a
    table as an OSC 8 hyperlink with ``hyperlinks``, else its text and the URL)."""
    import io

    for loading in _RICH_LOADING:
        loading.join()
    from rich.console import Console
    from rich.markdown import Markdown

    console = Console(
        file=io.StringIO(),
        force_terminal=True,
        color_system="256",
        width=width,
        legacy_windows=False,
    )
    markdown: Any = Markdown(neutralise(block), code_theme="monokai", hyperlinks=hyperlinks)
    console.print(markdown)
    text: str = console.file.getvalue()  # type: ignore[attr-defined]
    return _without_blank_edges(text)


def _without_blank_edges(text: str) -> str:
    """rich pads a block with empty rows; the answer's own blank lines space it already."""
    import re

    lines = text.split("\n")
    blank = re.compile(r"(?:\x1b\[[0-9;]*m| )*")
    while lines and blank.fullmatch(lines[0]):
        lines.pop(0)
    while lines and blank.fullmatch(lines[-1]):
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""
