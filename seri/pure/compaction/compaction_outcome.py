"""What a compaction came to: done (``Compacted``) or why not (``NotCompacted``), and why a
history that does not fit the window cannot be made to.

Apart from ``seri.pure.compaction.compaction``, which computes it, because the agent loop and every
caller decide on these values on each model call, while the summarizer and its helpers
(folding, recap merging, the shrink ladder's planning) are needed only when a compaction
runs: loading them at every start cost ``seri chat -p`` time before its first request.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from seri.pure.compaction.tokens import estimate_tokens, message_chars, messages_chars
from seri.pure.compaction.window import Window
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.session.records import Message
from seri.pure.trajectories import history_events

if TYPE_CHECKING:
    from seri.pure.compaction.recap import Recap

NOT_ENOUGH_HISTORY = "Not enough history to compact."
# Why a compaction was refused when the session changed after it was read (another process
# appended, compacted or rewound). The interpreter answers with it instead of calling the summarizer
# when it already knows, and the swap itself answers False.
SESSION_CHANGED = (
    "the session changed while compacting (another seri process wrote to it); nothing was replaced"
)


class Why(enum.Enum):
    """Why a compaction (with the shrink ladder after it) did not happen."""

    # No safe cut evicts enough messages, and the history fits as it is: nothing to do.
    NO_CUT = "no_cut"
    # Another process wrote to the session meanwhile; nothing was replaced.
    SESSION_CHANGED = "session_changed"
    # The summarizer's call failed, was refused as too long, or answered nothing usable.
    SUMMARIZER_FAILED = "summarizer_failed"
    # Even with every tool payload elided the history does not fit.
    DOES_NOT_FIT = "does_not_fit"


@attrs.frozen
class NotCompacted:
    """No compaction happened: why, as a value to decide on, and as a sentence to show."""

    reason: Why
    detail: str
    window: Window | None = None
    budget: OutputBudget | None = None


NO_CUT = NotCompacted(Why.NO_CUT, NOT_ENOUGH_HISTORY)
CHANGED = NotCompacted(Why.SESSION_CHANGED, SESSION_CHANGED)


@attrs.frozen
class Compacted:
    history: tuple[Message, ...]
    recap: Recap
    evicted: int
    summary_calls: int = 1
    window: Window | None = None
    budget: OutputBudget | None = None
    # The trajectory's record of it, when the caller records it (``defer_record``).
    event: history_events.Compaction | None = None


CompactionOutcome = Compacted | NotCompacted


def does_not_fit(
    window: Window,
    history: Sequence[Message],
    pins: Sequence[str],
    limit: int,
    servers: Sequence[tuple[str, int]] = (),
) -> str:
    """Why ``history`` (local tokens over ``limit``, every payload already elided) does not
    fit, and what to do about it. ``servers``: the MCP servers whose tool definitions the
    requests carry, with their characters, largest first (named when the overhead is it)."""
    if window.request_room_local <= 0:
        named = "; ".join(
            f"MCP server {name!r} about {window.provider(estimate_tokens(chars)):,}"
            for name, chars in servers[:3]
        )
        advice = (
            f" (tool definitions of {named}). Use a model with a larger window, or fewer "
            "MCP servers (seri mcp list shows them), or shorten AGENTS.md, the rules and "
            "the memory files"
            if named
            else ". Use a model with a larger window, or shorten AGENTS.md, the rules and "
            "the memory files"
        )
        return (
            f"the system prompt and the tool definitions alone take about "
            f"{window.provider(window.overhead_local):,} of the {window.tokens:,} tokens of "
            f"the window (as the provider counts them){advice}"
        )
    largest = max(history, key=message_chars, default=None)
    what = ""
    if largest is not None:
        kind = f"{largest.kind} " if largest.kind else ""
        what = (
            f"; its largest message is a {kind}{largest.role} message of "
            f"{message_chars(largest):,} characters"
        )
    pinned = sum(len(p) for p in pins)
    pins_note = (
        f" ({pinned:,} characters of them are pinned notes: seri pin --rm)" if pinned else ""
    )
    size = estimate_tokens(messages_chars(history))
    return (
        f"the session does not fit the window even with every tool payload elided: the "
        f"history needs about {window.provider(size):,} tokens and may "
        f"take {window.provider(limit):,} of the {window.tokens:,}{what}{pins_note}. Start a new "
        "session (/clear), or use a model with a larger window (context_window in "
        "config.json)"
    )
