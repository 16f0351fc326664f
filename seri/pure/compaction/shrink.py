"""The shrink ladder: what gives way when no cut makes a session fit.

A cut can keep the newest group only, and that group (or a history with no safe cut) can still
be too large: several long tool results at once, a huge write, an imported session's last
output. Then the oldest oversized payloads in the session, tool results and tool-call
arguments, are replaced by ``{"elided": true, "originalBytes": N, "fullText": PATH}``, where
PATH is the spill file that keeps the whole text for the model to page through. The rungs
go down from the elision threshold: first what is over it, then smaller payloads, oldest
first on each rung, until the history fits. User and assistant text never give way; when they
alone are too large, nothing more can shrink and the caller says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

import attrs

from seri.pure.session.records import Message

# Below this many characters a payload is not worth a marker (a marker is about 100).
SMALLEST_PAYLOAD = 256
_MARKER_CHARS = 120


@attrs.frozen
class Payload:
    """One payload of ``history[index]``: its tool result (``call`` None) or the arguments of
    its tool call number ``call``."""

    index: int
    call: int | None
    text: str


def elided_payload(original_bytes: int, full_text_at: str = "", path: str = "") -> str:
    """The marker that stands in for a payload of ``original_bytes`` bytes.

    ``path`` is the file an elided call's arguments named: kept, so that the call still says
    what it touched (to the model, and to the recap's Read:/Modified: lists, which are taken
    from the calls themselves when the call is evicted later).
    """
    marker: dict[str, object] = {"elided": True, "originalBytes": original_bytes}
    if full_text_at:
        marker["fullText"] = full_text_at
    if path:
        marker["path"] = path
    return json.dumps(marker)


def is_elided(text: str) -> bool:
    return text.startswith('{"elided": true')


def payloads(history: Sequence[Message]) -> Iterator[Payload]:
    """Every payload of ``history`` that is not elided yet, oldest first."""
    for index, message in enumerate(history):
        if message.role == "tool":
            if not is_elided(message.text):
                yield Payload(index, None, message.text)
            continue
        for number, call in enumerate(message.tool_calls):
            if not is_elided(call.arguments):
                yield Payload(index, number, call.arguments)


def rungs(elide_bytes: int) -> tuple[int, ...]:
    """The ladder's thresholds in characters, from the elision threshold down."""
    steps = []
    size = max(elide_bytes, SMALLEST_PAYLOAD)
    while size > SMALLEST_PAYLOAD:
        steps.append(size)
        size //= 4
    steps.append(SMALLEST_PAYLOAD)
    return tuple(steps)


def plan_shrink(
    history: Sequence[Message], need_tokens: int, elide_bytes: int
) -> tuple[Payload, ...]:
    """The payloads to elide, oldest first on each rung, until ``need_tokens`` are saved.

    Returns every candidate when even all of them save too little: the caller elides them and
    then reports what is still too large.
    """
    if need_tokens <= 0:
        return ()
    chosen: list[Payload] = []
    taken: set[tuple[int, int | None]] = set()
    saved = 0
    candidates = [p for p in payloads(history) if len(p.text) > SMALLEST_PAYLOAD]
    for rung in rungs(elide_bytes):
        for payload in candidates:
            key = (payload.index, payload.call)
            if key in taken or len(payload.text) <= rung:
                continue
            chosen.append(payload)
            taken.add(key)
            saved += saving(payload)
            if saved >= need_tokens:
                return tuple(chosen)
    return tuple(chosen)


def saving(payload: Payload) -> int:
    """About how many local tokens eliding ``payload`` saves."""
    return max(0, (len(payload.text) - _MARKER_CHARS) // 4)


def with_elided(message: Message, payload: Payload, marker: str) -> Message:
    """``message`` with ``payload`` replaced by ``marker``."""
    if payload.call is None:
        return attrs.evolve(message, text=marker)
    calls = list(message.tool_calls)
    calls[payload.call] = attrs.evolve(calls[payload.call], arguments=marker)
    return attrs.evolve(message, tool_calls=tuple(calls))
