"""A command's output, capped: its head and tail kept in bounded memory, and the text shown.

``OutputCapture`` is fed the output as it arrives, in chunks cut anywhere; only the first
``head_bytes`` and the last ``tail_bytes`` are kept, with totals counted, so ``yes`` for an
hour costs the same memory as ``true``. ``capped_output`` then decodes what was kept and puts
a marker where the middle was left out, saying how much (and where the whole output is, when
it was spilled to a file). Very many short lines are capped too: at most ``HEAD_LINES`` and
``TAIL_LINES`` are shown.

Where the head or the tail is cut out of a longer line, the cut moves to the nearest
character that cannot be part of a key or token, so that no secret is ever shown (or stored)
in two halves that redaction cannot recognise; and the cuts never fall inside a UTF-8
character.

This is the bash tool's cap on a stream of unknown length; ``result_cap`` is the other cap, on
a whole result text against the context window (it may cut this output again).
"""

from __future__ import annotations

import codecs
import re

import attrs

HEAD_BYTES = 25_000
TAIL_BYTES = 25_000
HEAD_LINES = 1_000
TAIL_LINES = 1_000
# How far a cut may move to avoid splitting a token (a key is far shorter).
SEAM_REACH = 512
# Characters a key, a token or an Authorization value can be made of.
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-.~+/=:]")


def token_seam_bytes(data: bytearray, near: int) -> int:
    """A cut at or before ``near`` that splits no token (``near`` if none is close)."""
    for index in range(near, max(near - SEAM_REACH, 0), -1):
        if not _TOKEN_CHAR.match(chr(data[index - 1])):
            return index
    return near


class OutputCapture:
    """Head and tail of a byte stream, with totals, in bounded memory."""

    def __init__(self, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES) -> None:
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.newlines = 0
        self.last_byte = b""
        self.has_nul = False
        self.dropped = False

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.has_nul = self.has_nul or b"\0" in chunk
        self.last_byte = chunk[-1:]
        room = self.head_bytes - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.tail_bytes
            if excess > 0:
                del self.tail[:excess]
                self.dropped = True

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.last_byte not in (b"", b"\n") else 0)

    @property
    def shown_whole(self) -> bool:
        """Whether ``capped_output`` shows every byte and line (nothing needs a spill file)."""
        return not (self.dropped or self.lines > HEAD_LINES + TAIL_LINES)


@attrs.frozen
class CappedOutput:
    """The output as shown: ``text`` (with the marker where the middle was left out)."""

    text: str
    invalid_utf8: bool
    omitted_bytes: int
    omitted_lines: int

    @property
    def truncated(self) -> bool:
        return bool(self.omitted_bytes or self.omitted_lines)


def capped_output(capture: OutputCapture, full_output_at: str = "") -> CappedOutput:
    """What the model is shown of ``capture``; ``full_output_at`` names the spill file, if any."""
    body, invalid, omitted_bytes, omitted_lines = _render(capture)
    where = f"; the full output is in {full_output_at}" if full_output_at else ""
    marker = (
        (
            f"\n[… {omitted_bytes} bytes / {omitted_lines} lines omitted of {capture.total} "
            f"bytes / {capture.lines} lines{where} …]\n"
        )
        if omitted_bytes or omitted_lines
        else "\n"
    )
    return CappedOutput(body.replace(_GAP, marker), invalid, omitted_bytes, omitted_lines)


_GAP = "\x00GAP\x00"  # stands for the omitted middle until the marker is known


def _render(capture: OutputCapture) -> tuple[str, bool, int, int]:
    """Decode head and tail; return (text, invalid UTF-8, omitted bytes, omitted lines)."""
    if not capture.dropped:
        text, invalid = _decode(bytes(capture.head + capture.tail))
        head_text, tail_text, omitted_lines = _cap_lines(text)
        if not omitted_lines:
            return text, invalid, 0, 0
        omitted_bytes = len(text.encode()) - len(head_text.encode()) - len(tail_text.encode())
        return head_text + _GAP + tail_text, invalid, omitted_bytes, omitted_lines
    head, tail = bytes(capture.head), bytes(capture.tail)
    # Cut at character boundaries so the seams do not show as decoding errors.
    head_text, head_bad = _decode(head, final=False)
    tail = _skip_continuation_bytes(tail)
    tail_text, tail_bad = _decode(tail)
    # ... and between tokens, so no key is shown in halves that redaction cannot see.
    head_text = head_text[: _head_seam(head_text)]
    tail_text = tail_text[_tail_seam(tail_text) :]
    ending = "\n" if tail_text.endswith("\n") else ""
    head_lines = head_text.split("\n")
    if head_text.endswith("\n"):
        head_lines.pop()  # the head ends exactly at a line end; no partial line
    tail_lines = tail_text.removesuffix(ending).split("\n")
    extra_head = max(0, len(head_lines) - HEAD_LINES)
    extra_tail = max(0, len(tail_lines) - TAIL_LINES)
    kept_head = "\n".join(head_lines[:HEAD_LINES])
    kept_tail = "\n".join(tail_lines[extra_tail:]) + ending
    shown_bytes = len(kept_head.encode()) + len(kept_tail.encode())
    omitted_bytes = max(0, capture.total - shown_bytes)
    omitted_lines = max(
        0,
        capture.newlines - head.count(b"\n") - tail.count(b"\n") + extra_head + extra_tail,
    )
    return kept_head + _GAP + kept_tail, head_bad or tail_bad, omitted_bytes, omitted_lines


def _head_seam(text: str) -> int:
    """Where a head cut out of a longer stream should end: not inside a token."""
    if not text or not _TOKEN_CHAR.match(text[-1]):
        return len(text)
    for index in range(len(text) - 1, max(len(text) - SEAM_REACH, 0) - 1, -1):
        if not _TOKEN_CHAR.match(text[index]):
            return index + 1
    return len(text)


def _tail_seam(text: str) -> int:
    """Where a tail cut out of a longer stream should start: not inside a token."""
    for index in range(min(len(text), SEAM_REACH)):
        if not _TOKEN_CHAR.match(text[index]):
            return index
    return 0


def _cap_lines(text: str) -> tuple[str, str, int]:
    """Split very many short lines into kept head, kept tail and the count between."""
    ending = "\n" if text.endswith("\n") else ""
    lines = text.removesuffix(ending).split("\n")
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        return text, "", 0
    head = "\n".join(lines[:HEAD_LINES])
    tail = "\n".join(lines[-TAIL_LINES:]) + ending
    return head, tail, len(lines) - HEAD_LINES - TAIL_LINES


def _decode(data: bytes, *, final: bool = True) -> tuple[str, bool]:
    strict = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        text = strict.decode(data, final=final)
        invalid = False
    except UnicodeDecodeError:
        lenient = codecs.getincrementaldecoder("utf-8")("replace")
        text = lenient.decode(data, final=final)
        invalid = True
    return text.replace("\x00", "\ufffd"), invalid


def _skip_continuation_bytes(data: bytes) -> bytes:
    i = 0
    while i < min(3, len(data)) and data[i] & 0xC0 == 0x80:
        i += 1
    return data[i:]
