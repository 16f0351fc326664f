"""The sizes a compaction works by, and the cut they give: the keep budget, the room a recap's
rendering may take (and a summarizer request keeps for it), the tail's share, and the one
message that stands in for the evicted part."""

from __future__ import annotations

from collections.abc import Sequence

from seri.pure.compaction.carried_rules import rules_section
from seri.pure.compaction.cuts import Cut, cut_messages
from seri.pure.compaction.recap import Recap
from seri.pure.compaction.recap_rendering import render_recap
from seri.pure.compaction.tokens import estimate_tokens
from seri.pure.compaction.window import Window
from seri.pure.session.records import Message

# The smallest recap rendering budget, in characters: the bare bones of a recap.
MIN_RECAP_CHARS = 1_200


def recap_chars(window: Window) -> int:
    """How long a recap's rendering may be: half the keep budget (the tail has the rest)."""
    return max(MIN_RECAP_CHARS, keep_local(window) * 2)


def recap_reserve(window: Window, per_char: float = 1.0) -> int:
    """What a summarizer request keeps for the recap it carries (UTF-8 bytes / 4): a recap of
    the most a rendering may take, in the conversation's ``per_char`` bytes a character, and
    its JSON indentation."""
    return estimate_tokens(int(recap_chars(window) * per_char)) + 60


def keep_local(window: Window) -> int:
    """The keep budget a compaction cuts by: at most what it may leave behind."""
    return max(1, min(window.keep_local, window.history_target_local))


def recap_message(recap: Recap, pins: Sequence[str], window: Window) -> Message:
    """The one user message that stands in for the evicted part."""
    text = render_recap(recap, pins, recap_chars(window)) + rules_section(recap.rules or ())
    return Message(role="user", text=text, kind="recap")


def tail_budget(window: Window, previous: Recap | None, pins: Sequence[str], keep: int) -> int:
    """The kept tail's share of the keep budget: what the recap leaves of it."""
    recap = estimate_tokens(len(render_recap(previous or Recap(), pins, recap_chars(window))))
    return max(1, keep - recap)


def find_cut(
    history: Sequence[Message],
    previous: Recap | None,
    pins: Sequence[str],
    window: Window,
    keep: int | None,
) -> Cut | None:
    budget = keep_local(window) if keep is None else keep
    return cut_messages(history, tail_budget(window, previous, pins, budget))
