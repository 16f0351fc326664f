"""Compaction as a sequence of effects: find the cut, ask the summarizer, swap.

The same primitive serves the automatic trigger, the overflow retry, ``/compact``
and ``seri compact``; only the trigger name and the focus words differ.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import attrs

from seri.pure.cuts import cut_messages, message_tokens
from seri.pure.effects import ApplyCompaction, CallModel, Effect, ModelReply, Record
from seri.pure.recap import (
    Recap,
    elide_payloads,
    merge_recap,
    render_recap,
    summarizer_messages,
)
from seri.pure.recap_answer import parse_recap_answer
from seri.pure.recap_paths import paths_touched
from seri.pure.records import Message
from seri.pure.tokens import estimate_tokens, messages_chars

NOT_ENOUGH_HISTORY = "Not enough history to compact."
# Why a compaction was refused when the session changed after it was read (another process
# appended, compacted or rewound). The driver answers with it instead of calling the summarizer
# when it already knows, and the swap itself answers False.
SESSION_CHANGED = (
    "the session changed while compacting (another seri process wrote to it); nothing was replaced"
)


@attrs.frozen
class Compacted:
    history: tuple[Message, ...]
    recap: Recap
    evicted: int


@attrs.frozen
class NotCompacted:
    """No compaction happened; ``reason`` says why (no safe cut, summarizer failed, ...)."""

    reason: str
    no_cut: bool = False


CompactionOutcome = Compacted | NotCompacted


# A glob rule arrives as a message when it fires. Evicting that message must not
# take the rule out of force, so the recap carries the text of every rule that fired.
RULES_HEADING = "\n\n## Project rules in force\n\n"


def rules_in_force(evicted: Sequence[Message]) -> tuple[str, ...]:
    """Rule texts among the evicted messages, and those an evicted recap carried."""
    texts: dict[str, str] = {}
    for message in evicted:
        if message.kind == "rule":
            found = [message.text]
        elif message.kind == "recap" and RULES_HEADING in message.text:
            section = message.text.split(RULES_HEADING, 1)[1]
            found = ["[rule " + part for part in section.split("\n[rule ") if part]
            found[0] = found[0].removeprefix("[rule ")
        else:
            continue
        for text in found:
            texts.setdefault(text.split("]", 1)[0], text.strip())
    return tuple(texts.values())


def rules_section(evicted: Sequence[Message]) -> str:
    rules = rules_in_force(evicted)
    return RULES_HEADING + "\n".join(rules) if rules else ""


def summarizer_input(
    evicted: Sequence[Message], elide_bytes: int, budget: int | None
) -> Sequence[Message]:
    """What the summarizer reads: the evicted messages, newest first up to ``budget`` tokens.

    After elision the evicted part can still be larger than the window (a long session
    compacted for the first time); then the oldest of it is left out of the summarizer's
    copy rather than making the compaction request itself overflow. The recap's paths
    still come from every evicted call.
    """
    if budget is None:
        return evicted
    sizes = [message_tokens(m) for m in elide_payloads(evicted, elide_bytes)]
    if sum(sizes) <= budget:
        return evicted
    total, start = 0, len(evicted)
    while start > 0 and total + sizes[start - 1] <= budget:
        start -= 1
        total += sizes[start]
    skipped = start
    note = Message(
        role="user",
        text=f"[{skipped} older messages are not shown here: too long to summarize at once]",
    )
    return (note, *evicted[start:])


def compact(
    history: Sequence[Message],
    previous: Recap | None,
    *,
    keep_tokens: int,
    elide_bytes: int,
    trigger: str,
    focus: str = "",
    system_chars: int = 0,
    estimate_before: int | None = None,
    summary_budget: int | None = None,
) -> Generator[Effect, Any, CompactionOutcome]:
    """Compact ``history``; the driver applies the swap atomically or reports a conflict."""
    cut = cut_messages(history, keep_tokens)
    if cut is None:
        return NotCompacted(NOT_ENOUGH_HISTORY, no_cut=True)
    evicted = history[: cut.index_of_first_kept]
    kept = tuple(history[cut.index_of_first_kept :])
    shown = summarizer_input(evicted, elide_bytes, summary_budget)
    reply = yield CallModel(summarizer_messages(previous, shown, focus, elide_bytes), "summary")
    if not isinstance(reply, ModelReply):
        if reply.error == SESSION_CHANGED:
            return NotCompacted(SESSION_CHANGED)
        return NotCompacted(f"the summarizer call failed: {reply.error}")
    if not reply.message.text.strip():
        return NotCompacted("the summarizer answered with nothing")
    read, modified = paths_touched(evicted)
    recap = merge_recap(previous, parse_recap_answer(reply.message.text), read, modified)
    recap_message = Message(
        role="user", text=render_recap(recap) + rules_section(evicted), kind="recap"
    )
    before = (
        estimate_before
        if estimate_before is not None
        else estimate_tokens(system_chars + messages_chars(history))
    )
    after = estimate_tokens(system_chars + messages_chars((recap_message, *kept)))
    applied = yield ApplyCompaction(
        evicted=len(evicted),
        recap=recap,
        recap_message=recap_message,
        trigger=trigger,
        focus=focus,
        estimate_before=before,
        estimate_after=after,
    )
    if not applied:
        return NotCompacted(SESSION_CHANGED)
    yield Record(
        "compaction",
        {
            "trigger": trigger,
            "focus": focus,
            "evicted": len(evicted),
            "kept": len(kept),
            "estimate_before": before,
            "estimate_after": after,
        },
    )
    return Compacted((recap_message, *kept), recap, len(evicted))
