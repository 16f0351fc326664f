"""Where compaction cuts a history: the keep budget, safe boundaries, the four-evictable rule.

A cut splits the stored messages into an evicted prefix (summarized into the recap, then
dropped) and a kept tail. The rules, from the spec:

* The tail is chosen by a token budget, about ``keep_tokens`` (20,000 by default), not by a
  number of messages. Among the safe boundaries the oldest one whose tail fits is taken, so
  the tail keeps as much recent history as the budget allows.
* A boundary is only ever placed immediately before a user or an assistant message. A tool
  message is always the second half of a call/result pair (several of them, after an assistant
  message with parallel calls), so cutting before one would split a pair.
* A cut that would evict fewer than four messages is skipped: it would cost a model call and
  save almost nothing.

One case the spec leaves open: the newest group alone (the newest user or assistant message
and the tool results after it) is larger than the budget. Then that group is kept whole and
everything older is evicted. Keeping nothing would hand the model a recap in place of the very
result it asked for, and cutting inside the group would split a pair; an oversized tool result
is for the tools to cap, not for compaction. So ``kept_tokens`` exceeds ``keep_tokens`` exactly
when the tail is that one group.

The search walks from the newest message back and stops as soon as the budget is spent, so its
work is proportional to the kept tail, not to the length of the history: the store can hand it
rows lazily.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from seri.pure.compaction.tokens import FRAMING_TOKENS, estimate_tokens, message_chars
from seri.pure.session.records import Message, Role

DEFAULT_KEEP_TOKENS = 20_000
MIN_EVICTED = 4

# Roles a boundary may sit in front of. Tool results never start a group; system messages are
# not stored (the frozen system prompt lives with the session).
_GROUP_STARTS: frozenset[str] = frozenset({"user", "assistant"})


@attrs.frozen
class Cut:
    """A safe cut: messages ``[0, index_of_first_kept)`` go, the rest stay.

    ``evicted_count`` equals ``index_of_first_kept``; it is spelled out because that is the
    number the store deletes. ``kept_tokens`` is the sum of the kept messages' tokens.
    """

    index_of_first_kept: int
    evicted_count: int
    kept_tokens: int


def keep_budget(keep_tokens: int, context_window: int) -> int:
    """The keep budget for a window: ``keep_tokens``, at most a quarter of the window.

    Keeping more than that in a small window would leave nothing to evict when the 50%
    trigger fires.
    """
    return min(keep_tokens, max(context_window // 4, 1))


def find_cut(
    count: int,
    newest_first: Iterable[tuple[Role, int]],
    keep_tokens: int = DEFAULT_KEEP_TOKENS,
    *,
    starts_with_recap: bool = False,
) -> Cut | None:
    """The cut for a history of ``count`` messages, read lazily from the newest end.

    ``newest_first`` yields ``(role, tokens)`` for messages ``count - 1``, ``count - 2``, ... and
    is consumed only as far as needed: the kept tail, the tool results just before it, and one
    message more to learn the budget is spent.

    ``starts_with_recap`` says message 0 is an earlier recap. It is evicted with the rest (the
    new recap replaces it) but does not count towards the four evicted messages, since
    re-summarizing a recap with three small messages would gain nothing.

    Returns None when no safe cut evicts at least four messages.
    """
    if count < 0 or keep_tokens < 0:
        raise ValueError(f"count and keep_tokens must not be negative: {count}, {keep_tokens}")
    best: tuple[int, int] | None = None  # (index of the first kept message, tokens kept)
    kept = 0
    index = count
    for role, tokens in newest_first:
        index -= 1
        if index < 0 or tokens < 0:
            raise ValueError(f"more than {count} messages, or negative tokens at {index}")
        kept += tokens
        over = kept > keep_tokens
        if over and best is not None:
            break
        if role in _GROUP_STARTS:
            best = (index, kept)
            if over:  # the newest group alone exceeds the budget: it is kept whole
                break
    else:
        if index != 0:
            raise ValueError(f"expected {count} messages, got {count - index}")
    if best is None:
        return None
    first_kept, kept_tokens = best
    counted = first_kept - (1 if starts_with_recap else 0)
    if counted < MIN_EVICTED:
        return None
    return Cut(index_of_first_kept=first_kept, evicted_count=first_kept, kept_tokens=kept_tokens)


def message_tokens(m: Message) -> int:
    """The token estimate of one message, as the cut search counts it: with its framing."""
    return estimate_tokens(message_chars(m)) + FRAMING_TOKENS


def cut_messages(messages: Sequence[Message], keep_tokens: int = DEFAULT_KEEP_TOKENS) -> Cut | None:
    """``find_cut`` over stored messages, oldest first; a leading recap message is noticed."""
    starts_with_recap = bool(messages) and messages[0].kind == "recap"
    newest_first = ((m.role, message_tokens(m)) for m in reversed(messages))
    return find_cut(len(messages), newest_first, keep_tokens, starts_with_recap=starts_with_recap)
