"""When a task compacts, driven by hand: the 50% trigger before a call, the overflow retry
after a refusal, the failures that end a turn and those that do not."""

from __future__ import annotations

import json

from seri.pure.agent.effects import ApplyCompaction, CallModel, ModelFailed, ModelReply
from seri.pure.agent.task_records import Conversation
from seri.pure.agent.turn import compact_on_demand, run_task
from seri.pure.compaction.compaction_outcome import NOT_ENOUGH_HISTORY, SESSION_CHANGED, Why
from seri.pure.provider.provider_failure import OverflowNumbers
from seri.pure.session.records import Message
from tests.flow.steps import Steps, answer, setup, user

WINDOW = 16_000
RECAP = json.dumps({"goal": "ship it", "progress": ["read the code"], "next_steps": ["test"]})


def long_history(turns: int = 12, words: int = 700) -> Conversation:
    """Alternating user and assistant messages, each about ``words`` × 5 characters."""
    history = tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text=f"turn {n} " + "word " * words)
        for n in range(turns)
    )
    return Conversation(history, total_chars=sum(len(m.text) for m in history))


def summary(text: str = RECAP) -> ModelReply:
    return ModelReply(Message(role="assistant", text=text))


def test_at_half_the_window_a_task_compacts_before_its_first_call() -> None:
    """About 7,000 tokens of history in a 16,000-token window: the summarizer is asked first,
    the swap is applied, and the turn request carries the recap and the kept tail."""
    task = setup(context_window=WINDOW, keep_tokens=2_000)
    steps = Steps(run_task(task, long_history(), user("go on")))
    request = steps.effect
    assert isinstance(request, CallModel)
    assert request.purpose == "summary"
    assert steps.summarize(summary()) >= 1
    swap = steps.effect
    assert isinstance(swap, ApplyCompaction)
    assert swap.trigger == "auto"
    assert swap.recap.goal == "ship it"
    assert swap.estimate_after < swap.estimate_before
    steps.send(True)
    turn = steps.effect
    assert isinstance(turn, CallModel) and turn.purpose == "turn"
    assert turn.messages[0].kind == "recap"
    assert "ship it" in turn.messages[0].text
    assert steps.recorded("compaction")[0]["trigger"] == "auto"
    steps.send(answer("done"))
    assert steps.result.status == "done"
    assert steps.result.conversation.recap is not None


def test_below_half_the_window_nothing_is_compacted() -> None:
    task = setup(context_window=200_000)
    steps = Steps(run_task(task, long_history(), user("go on")))
    assert isinstance(steps.effect, CallModel) and steps.effect.purpose == "turn"


def test_a_failed_automatic_compaction_is_fail_soft() -> None:
    task = setup(context_window=WINDOW, keep_tokens=2_000)
    steps = Steps(run_task(task, long_history(), user("go on")))
    steps.send(ModelFailed("HTTP 500"))
    assert isinstance(steps.effect, CallModel) and steps.effect.purpose == "turn"
    assert steps.said == [
        "warning: automatic compaction skipped: the summarizer call failed: HTTP 500"
    ]


def test_an_overflow_compacts_once_and_retries_the_call() -> None:
    """The provider refuses the turn as too long (stating its numbers): the window learns
    from them, the history is compacted and the same turn is sent again."""
    task = setup(context_window=200_000)
    steps = Steps(run_task(task, long_history(), user("go on")))
    numbers = OverflowNumbers(limit=6_000, input_tokens=9_000)
    steps.send(ModelFailed("too long", overflow=True, overflow_numbers=numbers))
    assert steps.recorded("overflow")[0]["context_window"] == 6_000
    assert isinstance(steps.effect, CallModel) and steps.effect.purpose == "summary"
    steps.summarize(summary())
    assert isinstance(steps.effect, ApplyCompaction)
    assert steps.effect.trigger == "overflow"
    steps.send(True)
    retried = steps.effect
    assert isinstance(retried, CallModel) and retried.purpose == "turn"
    assert retried.messages[0].kind == "recap"
    steps.send(answer("fits now"))
    assert steps.result.status == "done"


def test_a_second_overflow_fails_the_turn() -> None:
    steps = Steps(run_task(setup(), long_history(), user("go on")))
    steps.send(ModelFailed("too long", overflow=True))
    steps.summarize(summary())
    steps.send(True)
    steps.send(ModelFailed("still too long", overflow=True))
    assert steps.result.status == "overflow"
    assert "still too long after compacting" in steps.result.detail


def test_an_overflow_with_nothing_to_compact_fails_the_turn_saying_why() -> None:
    steps = Steps(run_task(setup(), Conversation(()), user("x" * 40)))
    steps.send(ModelFailed("too long", overflow=True))
    assert steps.result.status == "overflow"
    assert "no safe cut exists and no tool payload is left to shrink" in steps.result.detail


def test_a_session_changed_meanwhile_is_a_value_not_a_string_to_compare() -> None:
    """The interpreter answers a summarizer call with ``session_changed`` when another process
    wrote to the session; /compact reports it as such (and seri compact retries on it)."""
    steps = Steps(compact_on_demand(setup(context_window=WINDOW), long_history(), ""))
    steps.send(ModelFailed(SESSION_CHANGED, session_changed=True))
    end = steps.result
    assert end.not_compacted is not None
    assert end.not_compacted.reason is Why.SESSION_CHANGED


def test_compact_on_demand_with_too_little_history_says_so() -> None:
    short = Conversation((user("hi"), Message(role="assistant", text="hello")), total_chars=7)
    steps = Steps(compact_on_demand(setup(), short, "focus"))
    assert steps.done
    why = steps.result.not_compacted
    assert (why.reason, why.detail) == (Why.NO_CUT, NOT_ENOUGH_HISTORY)


def test_a_swap_refused_by_the_store_changes_nothing() -> None:
    steps = Steps(compact_on_demand(setup(context_window=WINDOW), long_history(), ""))
    steps.summarize(summary())
    assert isinstance(steps.effect, ApplyCompaction)
    steps.send(False)
    end = steps.result
    assert end.not_compacted.reason is Why.SESSION_CHANGED
    assert end.conversation.recap is None
    assert end.conversation.history == long_history().history
