"""The summarizer's view of an evicted part too long for one request: chunks, oldest first.

Compaction folds: the first chunk is summarized (updating the previous recap, if any), the next
chunk updates that recap, and so on, so the summarizer sees everything that is evicted, the
user's first words included, and every request fits the window. Each chunk holds as many
messages as fit the room a request has left after its own instructions and the recap so far;
a single message too long for any request is shortened in the summarizer's copy (its head and
tail, with a marker), never dropped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs

from seri.pure.compaction.recap import Recap
from seri.pure.compaction.summarizer_request import (
    elide_payloads,
    render_transcript,
    summarizer_messages,
)
from seri.pure.compaction.tokens import FRAMING_TOKENS, estimate_tokens, utf8_size
from seri.pure.session.records import Message

# Separators between transcript entries.
_ENTRY_FRAMING = 2
# A message is shown with at least this much (UTF-8 bytes), however tight the room.
MIN_ENTRY_CHARS = 400


@attrs.frozen
class Chunk:
    """Messages ``[start, end)`` of the history, and the request that summarizes them."""

    start: int
    end: int
    request: tuple[Message, ...]

    @property
    def local_tokens(self) -> int:
        """The request's size as it is sized: UTF-8 bytes / 4 and each message's framing."""
        return request_tokens(self.request)

    @property
    def char_tokens(self) -> int:
        """The request's size as the window's scale counts: characters / 4."""
        return estimate_tokens(sum(len(m.text) for m in self.request))


def request_tokens(request: Sequence[Message]) -> int:
    """A summarizer request's size as it is sized (what the provider's count is compared to):
    ``ceil(UTF-8 bytes / 4)`` and each message's framing."""
    return estimate_tokens(sum(utf8_size(m.text) for m in request)) + FRAMING_TOKENS * len(request)


def summarizer_copy(message: Message, elide_bytes: int, max_bytes: int) -> Message:
    """What the summarizer reads of one message: payloads elided, and no more than about
    ``max_bytes`` UTF-8 bytes of transcript."""
    (copy,) = elide_payloads((message,), elide_bytes)
    excess = entry_bytes(copy) - max_bytes
    if excess <= 0:
        return copy
    if copy.tool_calls:
        # Several calls, each under the elision threshold, can still be too much together.
        (copy,) = elide_payloads((copy,), 0)
        excess = entry_bytes(copy) - max_bytes
        if excess <= 0:
            return copy
    text = copy.text
    # Bytes to characters at the text's own rate (a character of Japanese is three bytes).
    per_char = max(1.0, utf8_size(text) / len(text)) if text else 1.0
    drop = math.ceil(excess / per_char)
    return attrs.evolve(copy, text=shortened(text, max(0, len(text) - drop)))


def shortened(text: str, max_chars: int) -> str:
    """``text`` in about ``max_chars`` characters: its head and tail around a marker."""
    if len(text) <= max_chars:
        return text
    marker = f"\n[… {len(text)} characters in all; the middle is left out for the recap …]\n"
    # The marker's bytes, not its characters: a shortened copy is sized in UTF-8 bytes, and
    # its two ellipses take three bytes each.
    room = max(0, max_chars - utf8_size(marker))
    head = room * 2 // 3
    tail = room - head
    return text[:head] + marker + (text[len(text) - tail :] if tail else "")


def entry_bytes(message: Message) -> int:
    """UTF-8 bytes one message adds to a summarizer transcript."""
    return utf8_size(render_transcript((message,))) + _ENTRY_FRAMING


def next_chunk(
    history: Sequence[Message],
    start: int,
    end: int,
    previous: Recap | None,
    *,
    room_tokens: int,
    focus: str,
    elide_bytes: int,
    project: str = "",
    recap_reserve: int = 0,
) -> Chunk:
    """The chunk that starts at ``start``: as many of ``history[start:end]`` as one request of
    at most ``room_tokens`` (UTF-8 bytes / 4, as ``request_tokens`` counts) holds (at least one
    message, shortened if need be).

    Its work is proportional to the chunk, not to the history. ``recap_reserve`` (local
    tokens) is kept for the recap the request carries, whatever the recap so far is: the
    chunks then do not depend on what the summarizer answers, and a dry run plans them.
    """
    if not 0 <= start < end <= len(history):
        raise ValueError(f"no messages to summarize in [{start}, {end})")
    bare = request_tokens(summarizer_messages(previous, (), focus, elide_bytes, project))
    if recap_reserve:
        without = request_tokens(summarizer_messages(None, (), focus, elide_bytes, project))
        bare = max(bare, without + recap_reserve)
    free = max(0, (room_tokens - bare) * 4)
    copies: list[Message] = []
    sizes: list[int] = []
    used = 0
    stop = start
    while stop < end:
        copy = summarizer_copy(history[stop], elide_bytes, max(free, MIN_ENTRY_CHARS))
        size = entry_bytes(copy)
        if copies and used + size > free:
            break
        copies.append(copy)
        sizes.append(size)
        used += size
        stop += 1
    while True:
        request = summarizer_messages(
            previous, history[start:stop], focus, elide_bytes, project, copies=copies
        )
        over = (request_tokens(request) - room_tokens) * 4
        if over <= 0:
            return Chunk(start, stop, request)
        if len(copies) > 1:
            # The paths section did not fit beside the messages: give back as many as needed.
            while len(copies) > 1 and over > 0:
                over -= sizes.pop()
                copies.pop()
                stop -= 1
            continue
        # One message: its copy gives way, until there is nothing left to give.
        smaller = summarizer_copy(history[start], elide_bytes, sizes[0] - over)
        if entry_bytes(smaller) >= sizes[0]:
            return Chunk(start, stop, request)
        copies[0], sizes[0] = smaller, entry_bytes(smaller)
