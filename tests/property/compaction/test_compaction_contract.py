"""The compaction contract's rules (seri.pure.compaction.compaction_contract): the no-loop verdict,
the task in hand a cut must carry, its fitting into the recap, and the ledger's marks."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.agent.goals import Goal, goal_pin
from seri.pure.compaction.compaction_contract import (
    MIN_FREED_SHARE,
    LastCompaction,
    contract_marks,
    fitted_task,
    is_task,
    loop_verdict,
    task_in_hand,
)
from seri.pure.session.records import Message
from tests.property.strategies import plain_messages

messages = plain_messages(
    st.text(max_size=30), kinds=st.sampled_from(("", "", "rule", "recap")), max_size=20
)


@given(
    st.one_of(st.none(), st.builds(LastCompaction, st.integers(0, 10**6), st.integers(0, 10**6))),
    st.integers(1, 10**6),
    st.integers(1, 10**5),
    st.booleans(),
)
def test_the_no_loop_verdict(
    last: LastCompaction | None, room: int, min_growth: int, required: bool
) -> None:
    why = loop_verdict(last, room, min_growth, required=required)
    if last is None:
        assert why == ""
        return
    too_little = last.freed < MIN_FREED_SHARE * room
    too_soon = required and last.grown < min_growth
    assert bool(why) == (too_little or too_soon)
    # Not needed yet (the 50% trigger only): growth alone never stops a run.
    if not required:
        assert bool(why) == too_little


@given(messages, st.data(), st.text(max_size=20))
def test_the_task_in_hand_is_the_newest_task_when_the_cut_evicts_it(
    history: list[Message], data: st.DataObject, previous: str
) -> None:
    end = data.draw(st.integers(0, len(history)))
    carried = task_in_hand(history, end, previous)
    tasks = [i for i, m in enumerate(history) if is_task(m)]
    if not tasks:
        assert carried == previous
    elif tasks[-1] >= end:
        assert carried == ""  # kept in the tail, verbatim
    else:
        assert carried == history[tasks[-1]].text


@given(st.text(max_size=5000), st.integers(0, 20_000))
def test_a_fitted_task_is_whole_or_bounded(task: str, recap_chars: int) -> None:
    fitted = fitted_task(task, recap_chars)
    limit = max(200, recap_chars // 4)
    if len(task) <= limit:
        assert fitted == task
    else:
        assert len(fitted) <= limit and "characters of this message left out" in fitted
        assert task.startswith(fitted[:10])


@given(messages, st.data(), st.text(min_size=1, max_size=40), st.booleans())
def test_the_marks_say_what_came_through(
    history: list[Message], data: st.DataObject, goal_text: str, carry_goal: bool
) -> None:
    end = data.draw(st.integers(0, len(history)))
    task = task_in_hand(history, end, "")
    pin = goal_pin(Goal(goal_text, "make check"))
    recap_text = "recap\n" + (pin if carry_goal else "") + "\n" + task
    marks = contract_marks(history, end, Message("user", recap_text, kind="recap"), [pin], task)
    assert marks.goal_kept is carry_goal
    kept_task = any(is_task(m) for m in history[end:])
    if task:
        assert marks.task_kept is True
    else:
        assert marks.task_kept is (True if kept_task else None)
    assert marks.cache_rewrite_tokens >= 1
    unmarked = contract_marks(history, end, Message("user", "x", kind="recap"), [], task)
    assert unmarked.goal_kept is None
