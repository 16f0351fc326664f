"""One tool result's share of the window: what enters the history when a result is too long.

A result over the cap keeps its head and its tail; the middle is left out with a marker that
says how much is missing and where the whole text is (a spill file), with the line to page on
from. The same cut serves a result as a tool returns it and a stored result of an older or
imported session when a request is built (the store keeps every byte; the request carries the
cut form).
"""

from __future__ import annotations

import re

from seri.pure.compaction.window import RESULT_BYTE_CAP

# Of what is kept, this share is the head; the tail (where commands print their errors and
# summaries) gets the rest.
HEAD_SHARE = 0.6
# Room for the marker line itself.
MARKER_ROOM = 320
# read_file numbers a spill file's lines in pieces of at most this many characters (the
# longest line it shows of any file), so that the middle of one long line (minified JSON,
# base64, a progress bar redrawn with \r) can be paged to (review-1 N1).
PIECE_CHARS = 2_000


def pieces_before(text: str, end: int) -> int:
    """How many of ``text``'s pieces lie wholly before index ``end``: each line (up to a
    ``\n``) counts ``ceil(length / PIECE_CHARS)`` pieces, an empty one 1."""
    count = 0
    start = 0
    while (newline := text.find("\n", start, end)) >= 0:
        count += max(1, -(-(newline - start) // PIECE_CHARS))
        start = newline + 1
    return count + (end - start) // PIECE_CHARS


def needs_cap(text: str, cap_chars: int) -> bool:
    """Whether ``text`` is over ``cap_chars`` characters or the byte cap."""
    if len(text) > cap_chars:
        return True
    # A UTF-8 character takes at most 4 bytes: short texts need no encoding.
    return 4 * len(text) > RESULT_BYTE_CAP and len(text.encode("utf-8")) > RESULT_BYTE_CAP


def cap_result(text: str, cap_chars: int, full_text_at: str) -> str:
    """``text`` cut to fit ``cap_chars`` characters (and the byte cap), or ``text`` itself.

    ``full_text_at`` is the file holding the whole text ("" when it could not be written).
    """
    if not needs_cap(text, cap_chars):
        return text
    room = max(cap_chars - MARKER_ROOM, 2)
    while True:
        head_end = _line_end_before(text, int(room * HEAD_SHARE))
        tail_start = _line_start_after(text, len(text) - (room - head_end))
        head, tail = text[:head_end], text[tail_start:]
        kept_bytes = len(head.encode("utf-8", "surrogatepass")) + len(
            tail.encode("utf-8", "surrogatepass")
        )
        if kept_bytes + MARKER_ROOM <= RESULT_BYTE_CAP or room <= 2:
            break
        room = max(2, room * (RESULT_BYTE_CAP - MARKER_ROOM) // (kept_bytes + 1) - 1)
    return head + _marker(text, head, tail, full_text_at) + tail


# What a cut result's marker says of the whole: its bytes (said since the marker carried
# them), else its characters (markers written before).
_WHOLE_BYTES = re.compile(
    r"\n\[… \d+ of \d+ characters \(\d+ of \d+ lines\) left out here to fit the context "
    r"window; the whole result \((\d+) bytes\)"
)
_WHOLE_CHARS = re.compile(
    r"\n\[… \d+ of (\d+) characters \(\d+ of \d+ lines\) left out here to fit "
)
# A command's output cut by its capture (seri.pure.tools.output_capture): the bytes left out.
_OUTPUT_OMITTED = re.compile(
    r"\n\[… (\d+) bytes / \d+ lines omitted of \d+ bytes / \d+ lines[^\n]* …\]\n"
)


def whole_size(text: str) -> int | None:
    """The size of the whole result ``text`` was cut from, when it is a cut result.

    A result cut by ``cap_result`` says its whole size in UTF-8 bytes (the spill file's size);
    one cut before markers said so says its characters (bytes of ASCII text, a lower bound of
    any other). A command's output cut by its capture says the bytes it left out, which the
    marker line stands in for. ``None`` when ``text`` is not a cut result.
    """
    found = _WHOLE_BYTES.search(text) or _WHOLE_CHARS.search(text)
    if found:
        return int(found.group(1))
    omitted = _OUTPUT_OMITTED.search(text)
    if omitted is None:
        return None
    shown = len(text.encode("utf-8", "surrogatepass"))
    return shown - len(omitted.group().encode("utf-8", "surrogatepass")) + int(omitted.group(1))


def _marker(text: str, head: str, tail: str, full_text_at: str) -> str:
    omitted = len(text) - len(head) - len(tail)
    whole_bytes = len(text.encode("utf-8", "surrogatepass"))
    total_lines = text.count("\n") + 1
    omitted_lines = text.count("\n", len(head), len(text) - len(tail))
    # read_file numbers the spill file in pieces: the one the cut falls in comes next.
    next_line = pieces_before(text, len(head)) + 1
    long_lines = (
        f"; long lines count a line per {PIECE_CHARS:,} characters"
        if (_has_long_line(text))
        else ""
    )
    where = (
        f"the whole result ({whole_bytes} bytes) is in {full_text_at}: page through it with "
        f"read_file (offset={next_line} is the first line left out{long_lines})"
        if full_text_at
        else f"the whole result ({whole_bytes} bytes) was not kept"
    )
    return (
        f"\n[… {omitted} of {len(text)} characters ({omitted_lines} of {total_lines} lines) "
        f"left out here to fit the context window; {where} …]\n"
    )


def _has_long_line(text: str) -> bool:
    if len(text) <= PIECE_CHARS:
        return False
    return any(len(line) > PIECE_CHARS for line in text.split("\n"))


def _line_end_before(text: str, index: int) -> int:
    """``index``, moved back to just after a line end when one is near."""
    index = max(0, min(index, len(text)))
    newline = text.rfind("\n", max(0, index - index // 5), index)
    return newline + 1 if newline >= 0 else index


def _line_start_after(text: str, index: int) -> int:
    """``index``, moved forward to the start of a line when one is near."""
    index = max(0, min(index, len(text)))
    reach = (len(text) - index) // 5
    newline = text.find("\n", index, index + reach)
    return newline + 1 if newline >= 0 else index
