"""The compaction contract: what a person can rely on when seri compacts on its own.

* The task in hand survives: the newest message a person (or a goal's failing check) gave is
  never summarized away. When a cut evicts it, the recap carries it verbatim (``task``), and
  goes on carrying it through later compactions until a newer one arrives. The goal is a pin,
  carried verbatim in every recap. After each compaction the recap's text is checked for
  both (``ContractMarks``), and the ledger says whether they came through.
* No loops: a compaction that freed less than ``MIN_FREED_SHARE`` of the window, or a second
  compaction before the history grew by the keep budget, would only be followed by more of
  the same (claude-code #24179: 211 compactions). The run stops with ``context_exhausted``
  and the advice to hand the session off instead (``loop_verdict``).
* What it cost: the tokens the next request must write to the provider's cache again, since
  the cached prefix stopped at the evicted messages (the recap and the kept tail).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from seri.pure.compaction.tokens import estimate_tokens, messages_chars
from seri.pure.session.records import Message

# A compaction that frees less than this share of the window has nothing left to give: the
# history is mostly what it must keep (the recap, the pins, the newest turns).
MIN_FREED_SHARE = 0.10

HANDOFF_ADVICE = (
    "hand the session off: `seri handoff --session {session}` starts a new session from its "
    "recap and pins (or /clear and restate the task)"
)


def is_task(message: Message) -> bool:
    """A message that sets the work: one a person typed (or a goal's failing check)."""
    return message.role == "user" and not message.kind


def task_in_hand(history: Sequence[Message], end: int, previous_task: str) -> str:
    """What the recap of a cut at ``end`` must carry verbatim as the task in hand: the newest
    task when the cut evicts it; "" when it stays in the kept tail; the previous recap's when
    the history holds no task at all (a long task compacted more than once)."""
    for index in range(len(history) - 1, -1, -1):
        if is_task(history[index]):
            return history[index].text if index < end else ""
    return previous_task


def fitted_task(task: str, recap_chars: int) -> str:
    """The task in hand as the recap carries it: whole when it takes at most a quarter of
    the recap's room (``recap_chars``), else its head and its end around a marker saying how
    much was left out (the ledger's ``task_kept`` is then false). A recap within its room is
    what keeps the compaction's own sizing, and its dry run, true."""
    limit = max(200, recap_chars // 4)
    if len(task) <= limit:
        return task
    marker = "\n[… {:,} characters of this message left out here to fit the recap …]\n"
    room = limit - len(marker) - 10
    head, tail = room * 2 // 3, room // 3
    left_out = len(task) - head - tail
    return task[:head] + marker.format(left_out) + task[len(task) - tail :]


@attrs.frozen
class ContractMarks:
    """What the ledger notes of one compaction: whether the task in hand and the goal are in
    what the model will see (None: there was none), and the tokens to cache again."""

    task_kept: bool | None
    goal_kept: bool | None
    cache_rewrite_tokens: int


def contract_marks(
    history: Sequence[Message],
    end: int,
    recap_message: Message,
    pins: Sequence[str],
    task: str,
) -> ContractMarks:
    """Check the compaction of ``history`` at ``end`` (its recap message made) against the
    contract; ``task`` is the task in hand the recap had to carry (``task_in_hand``)."""
    kept = tuple(history[end:])
    task_kept: bool | None = None
    if task:
        task_kept = task in recap_message.text
    elif any(is_task(m) for m in kept):
        task_kept = True
    from seri.pure.agent.goals import GOAL_PIN_PREFIX

    goals = [pin for pin in pins if pin.startswith(GOAL_PIN_PREFIX)]
    goal_kept = all(goal in recap_message.text for goal in goals) if goals else None
    rewrite = estimate_tokens(messages_chars((recap_message, *kept)))
    return ContractMarks(task_kept, goal_kept, rewrite)


@attrs.frozen
class LastCompaction:
    """The run's last compaction, as the no-loop rule needs it: the tokens it freed, and the
    local tokens the history has grown by since."""

    freed: int
    grown: int = 0


def loop_verdict(
    last: LastCompaction | None, room_tokens: int, min_growth: int, *, required: bool
) -> str:
    """Why compacting again now would be a loop ("" when it may go ahead).

    ``room_tokens``: what the window holds besides the system prompt and the tools (the part
    a compaction can free). ``required``: the request cannot be sent as it is (not merely past
    the 50% trigger, which is skipped quietly until the history grew by the keep budget).
    ``min_growth``: the growth after which a needed compaction is no loop: the keep budget,
    or less where the window leaves a request little room beyond what a compaction keeps."""
    if last is None:
        return ""
    if last.freed < MIN_FREED_SHARE * room_tokens:
        return (
            f"the last compaction freed only {last.freed:,} tokens, less than "
            f"{MIN_FREED_SHARE:.0%} of the {room_tokens:,} tokens the window holds besides "
            "the system prompt and tools, so another would not free more"
        )
    if required and last.grown < min_growth:
        return (
            f"the history needs compacting again after growing only {last.grown:,} tokens "
            f"since the last compaction (less than the {min_growth:,} tokens a compaction "
            "must make room for)"
        )
    return ""


def exhausted_detail(why: str, session: str) -> str:
    """The message of a run stopped by the no-loop rule: why, and what to do."""
    return f"the context is exhausted: {why}; " + HANDOFF_ADVICE.format(session=session or "ID")


def auto_off_detail(session: str) -> str:
    """The message of a turn that overflowed with ``compaction.auto: false``."""
    return (
        "the request is too long for the window and compaction.auto is false in config.json, "
        f"so seri did not compact: run /compact (or `seri compact --session {session or 'ID'}`) "
        "and go on, or " + HANDOFF_ADVICE.format(session=session or "ID")
    )
