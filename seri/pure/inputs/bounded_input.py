"""Bounds on what seri reads from outside: how deep JSON may nest, how long a line, a message
and a whole source may be; and the one splitter of byte streams into bounded lines.

Every external JSON or line source (a provider's stream and answers, MCP servers over stdio
and HTTP, config.json, a project's .mcp.json, the older release's session files) is read
through this module with the ``InputLimits`` of its entry in ``SOURCES``. What goes over a
limit is a ``BoundedInputError`` (a ValueError) whose message names the source, the limit and
what to do; nothing is held beyond a limit, and the work is linear in what arrived.

Depth is checked on the text, before parsing: JSON nested 100,000 deep never reaches the
parser (which would raise RecursionError), and nothing deeper than ``MAX_DEPTH`` reaches the
code after it, some of which walks values recursively (an MCP ``inputSchema`` 490 deep ended
every chat in RecursionError).

Sans-I/O: callers feed bytes and text; nothing here reads.
"""

from __future__ import annotations

import re
from itertools import accumulate

import attrs

MIB = 1024 * 1024
# Far deeper than any real schema, result or message (they rarely pass 20), and shallow enough
# that code walking a value recursively stays far inside Python's stack of 1,000 frames.
MAX_DEPTH = 100


@attrs.frozen
class InputLimits:
    """The bounds of one source; ``name`` is how errors call it ("config.json")."""

    name: str
    max_line_bytes: int
    max_message_bytes: int
    max_total_bytes: int
    max_depth: int = MAX_DEPTH


PROVIDER_STREAM = InputLimits(
    "the provider's stream",
    max_line_bytes=16 * MIB,
    max_message_bytes=16 * MIB,
    max_total_bytes=256 * MIB,
)
PROVIDER_ANSWER = InputLimits(
    "the provider's answer",
    max_line_bytes=64 * MIB,
    max_message_bytes=64 * MIB,
    max_total_bytes=64 * MIB,
)
MCP_STDIO = InputLimits(
    "the MCP server", max_line_bytes=64 * MIB, max_message_bytes=64 * MIB, max_total_bytes=0
)
MCP_HTTP = InputLimits(
    "the MCP server", max_line_bytes=64 * MIB, max_message_bytes=64 * MIB, max_total_bytes=64 * MIB
)
# What an ACP client (an editor) writes on seri's stdin: one JSON-RPC message a line.
ACP_STDIO = InputLimits(
    "the ACP client", max_line_bytes=64 * MIB, max_message_bytes=64 * MIB, max_total_bytes=0
)
CONFIG_FILE = InputLimits(
    "config.json", max_line_bytes=4 * MIB, max_message_bytes=4 * MIB, max_total_bytes=4 * MIB
)
PROJECT_MCP_FILE = InputLimits(
    ".mcp.json", max_line_bytes=4 * MIB, max_message_bytes=4 * MIB, max_total_bytes=4 * MIB
)
LEGACY_SESSION_FILE = InputLimits(
    "the session file",
    max_line_bytes=64 * MIB,
    max_message_bytes=64 * MIB,
    max_total_bytes=512 * MIB,
)
# What a model sends as a tool call's arguments (inside the provider's stream, so bounded
# in size by it; here for its depth).
TOOL_ARGUMENTS = InputLimits(
    "the tool call's arguments",
    max_line_bytes=16 * MIB,
    max_message_bytes=16 * MIB,
    max_total_bytes=16 * MIB,
)

# Every external source by what it is; tests/faults/test_hostile_input.py fuzzes each one.
SOURCES: dict[str, InputLimits] = {
    "provider stream": PROVIDER_STREAM,
    "provider answer": PROVIDER_ANSWER,
    "mcp stdio": MCP_STDIO,
    "mcp http": MCP_HTTP,
    "acp stdio": ACP_STDIO,
    "config.json": CONFIG_FILE,
    ".mcp.json": PROJECT_MCP_FILE,
    "legacy session file": LEGACY_SESSION_FILE,
    "tool arguments": TOOL_ARGUMENTS,
}


class BoundedInputError(ValueError):
    """An input over one of its source's limits. ``str()`` names the source; ``reason``
    is the rest, for a caller that names the source its own way (with a path, a server)."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


def _size(count: int) -> str:
    if count >= MIB and count % MIB == 0:
        return f"{count // MIB} MiB"
    return f"{count:,} bytes"


def line_too_long(limits: InputLimits) -> BoundedInputError:
    return BoundedInputError(
        limits.name, f"a line longer than seri's limit of {_size(limits.max_line_bytes)}"
    )


def message_too_big(limits: InputLimits) -> BoundedInputError:
    return BoundedInputError(
        limits.name, f"a message larger than seri's limit of {_size(limits.max_message_bytes)}"
    )


def total_too_big(limits: InputLimits) -> BoundedInputError:
    return BoundedInputError(
        limits.name, f"more than seri's limit of {_size(limits.max_total_bytes)} in all"
    )


def too_deep(limits: InputLimits) -> BoundedInputError:
    return BoundedInputError(
        limits.name,
        f"JSON nested too deeply (more than seri's limit of {limits.max_depth} levels of "
        "arrays or objects inside each other)",
    )


# --- depth ------------------------------------------------------------------------------------

# A JSON string, or an unterminated one up to the end (that text is no JSON anyway): skipping
# strings this way matches every character once, so it is linear on any text.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = tuple(1 if b in b"[{" else -1 if b in b"]}" else 0 for b in range(256))
# Brackets are measured this many at a time, so a text far too deep stops at its first piece.
_PIECE = 1 << 16


def json_depth_over(text: str, limit: int) -> bool:
    """Whether JSON ``text`` nests arrays and objects more than ``limit`` deep (brackets
    inside strings do not count). Linear, and in C but for one step per bracket; a text with
    no more brackets than ``limit`` is answered by counting alone."""
    if text.count("[") + text.count("{") <= limit:
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).encode("ascii")
    depth = 0
    for start in range(0, len(brackets), _PIECE):
        piece = brackets[start : start + _PIECE]
        if depth + piece.count(b"[") + piece.count(b"{") <= limit:
            depth += sum(map(_STEP.__getitem__, piece))
            continue
        running = list(accumulate(map(_STEP.__getitem__, piece), initial=depth))
        if max(running) > limit:
            return True
        depth = running[-1]
    return False


def check_json_size(text: str | bytes, limits: InputLimits) -> None:
    """A message over the source's size limit, or nested too deeply, is refused before it
    is parsed."""
    if len(text) > limits.max_message_bytes:
        raise message_too_big(limits)
    as_text = text if isinstance(text, str) else text.decode("utf-8", "replace")
    if json_depth_over(as_text, limits.max_depth):
        raise too_deep(limits)


# --- lines ------------------------------------------------------------------------------------


@attrs.frozen
class OverlongLine:
    """In place of a line over the limit: reported as soon as the limit is passed, and the
    line's bytes up to its end are dropped, never held."""

    limit: int


_LF = re.compile(rb"\n")
_CR_OR_LF = re.compile(rb"[\r\n]")


class LineSplitter:
    """Bytes cut anywhere in, whole lines out (without their line ends), none longer than
    ``max_line_bytes``; each byte is looked at once, whatever the chunking.

    Lines end at LF (a CR before it is kept for the caller), or, with ``lone_cr`` (the SSE
    rules), at CR, LF or CRLF, also when a chunk ends between the CR and the LF.
    """

    def __init__(self, max_line_bytes: int, *, lone_cr: bool = False) -> None:
        self.max_line_bytes = max_line_bytes
        self._ends = _CR_OR_LF if lone_cr else _LF
        self._pieces: list[bytes] = []
        self._held = 0
        self._skipping = False  # inside an overlong line: drop bytes until it ends
        self._skip_lf = False  # the last chunk ended in CR: a leading LF belongs to it

    def feed(self, data: bytes) -> list[bytes | OverlongLine]:
        lines: list[bytes | OverlongLine] = []
        start = 0
        if self._skip_lf and data:
            self._skip_lf = False
            start = 1 if data[:1] == b"\n" else 0
        while True:
            found = self._ends.search(data, start)
            if found is None:
                self._hold(data[start:], lines)
                return lines
            end = found.start()
            self._hold(data[start:end], lines)
            if self._skipping:
                self._skipping = False
            else:
                lines.append(b"".join(self._pieces))
            self._pieces, self._held = [], 0
            start = end + 1
            if data[end] == 0x0D:  # only found with lone_cr
                if start == len(data):
                    self._skip_lf = True
                elif data[start] == 0x0A:
                    start += 1

    def finish(self) -> bytes | None:
        """The bytes after the last line end (``None`` when there are none, or when they
        are the start of an overlong line)."""
        rest = None if self._skipping or not self._pieces else b"".join(self._pieces)
        self._pieces, self._held, self._skipping = [], 0, False
        return rest

    def _hold(self, part: bytes, lines: list[bytes | OverlongLine]) -> None:
        if self._skipping or not part:
            return
        self._held += len(part)
        if self._held > self.max_line_bytes:
            self._pieces, self._held, self._skipping = [], 0, True
            lines.append(OverlongLine(self.max_line_bytes))
        else:
            self._pieces.append(part)
