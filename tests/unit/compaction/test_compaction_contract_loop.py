"""The compaction contract in the agent loop, driven as the interpreter drives it (pure
effects): no summarizer is called with `compaction.auto: false` (a request that cannot fit
fails the turn with advice); a compaction that freed too little, or a needed one too soon
after the last, ends the task as `context_exhausted` instead of compacting again; a run's
next task does not compact again before its history grew; and every compaction is announced
before its summarizer call."""

from __future__ import annotations

import attrs

from seri.pure.agent.effects import CallModel, Record
from seri.pure.agent.task_records import Conversation, TaskSetup
from seri.pure.agent.turn import run_task
from seri.pure.compaction.compaction_contract import LastCompaction
from seri.pure.session.records import Message
from seri.pure.trajectories import events, history_events
from tests.drive_effects import drive
from tests.unit.compaction.test_compaction_loop import Loop


def _setup(**changes: object) -> TaskSetup:
    from seri.pure.permissions.permission_policy import parse_policy
    from seri.pure.tools.tool_specs import select_specs

    setup = TaskSetup(
        system_prompt="rules. " * 400,
        max_turns=200,
        context_window=16_000,
        keep_tokens=4_000,
        elide_bytes=4_096,
        policy=parse_policy({"allow": ["glob"]}),
        interactive=False,
        tools=select_specs(("glob",)),
        tool_chars=4_700,
    )
    return attrs.evolve(setup, **changes)


def _history(count: int, size: int) -> tuple[Message, ...]:
    return tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text=f"earlier {n} " * size)
        for n in range(count)
    )


class Watching(Loop):
    """The loop's answers, and the order in which summarizer calls and records came."""

    def __init__(self, calls: int, billed: int) -> None:
        super().__init__(calls, billed)
        self.order: list[str] = []

    def __call__(self, effect: object) -> object:
        if isinstance(effect, CallModel) and effect.purpose == "summary":
            self.order.append("summary")
        if isinstance(effect, Record):
            self.order.append(effect.event.type)
        return super().__call__(effect)


def _conversation(history: tuple[Message, ...], **changes: object) -> Conversation:
    # A measured tokenizer (one token a ceil(chars/4)): requests are sized as they are.
    conversation = Conversation(
        history, total_chars=sum(len(m.text) for m in history), token_scale=1.0
    )
    return attrs.evolve(conversation, **changes)


def test_every_compaction_is_announced_before_its_summarizer_call() -> None:
    loop = Watching(calls=2, billed=9_000)
    end = drive(run_task(_setup(), _conversation(_history(12, 200)), Message("user", "go")), loop)
    assert end.status == "done" and loop.compactions >= 1
    first = loop.order.index(history_events.CompactionStart.type)
    assert first < loop.order.index("summary") < loop.order.index(history_events.Compaction.type)
    assert loop.order.count(history_events.CompactionStart.type) >= loop.compactions


def test_auto_off_never_calls_the_summarizer() -> None:
    # Over half the window: with compaction on, this compacts before the first call.
    loop = Watching(calls=2, billed=9_000)
    setup = _setup(auto_compact=False)
    end = drive(run_task(setup, _conversation(_history(12, 120)), Message("user", "go")), loop)
    assert end.status == "done" and loop.compactions == 0 and "summary" not in loop.order


def test_auto_off_fails_a_request_that_cannot_fit_with_advice() -> None:
    loop = Watching(calls=2, billed=20_000)
    setup = _setup(auto_compact=False)
    history = _history(40, 400)  # about 16,000 tokens: more than the window
    end = drive(run_task(setup, _conversation(history), Message("user", "go")), loop)
    assert end.status == "overflow" and loop.compactions == 0 and "summary" not in loop.order
    assert "compaction.auto is false" in end.detail and "seri handoff" in end.detail


def test_a_compaction_that_freed_too_little_is_not_followed_by_another() -> None:
    loop = Watching(calls=2, billed=9_000)
    tiny = LastCompaction(freed=50, grown=100_000)
    conversation = _conversation(_history(12, 200), last_compaction=tiny)
    end = drive(run_task(_setup(), conversation, Message("user", "go")), loop)
    assert end.status == "context_exhausted" and loop.compactions == 0
    assert "freed only 50 tokens" in end.detail and "seri handoff" in end.detail
    assert loop.order[-1] == events.TurnEnd.type


def test_a_needed_compaction_right_after_another_stops_the_run() -> None:
    loop = Watching(calls=2, billed=20_000)
    just_now = LastCompaction(freed=8_000, grown=10)
    conversation = _conversation(_history(40, 400), last_compaction=just_now)
    end = drive(run_task(_setup(), conversation, Message("user", "go")), loop)
    assert end.status == "context_exhausted" and loop.compactions == 0
    assert "after growing only" in end.detail


def test_the_next_task_of_a_run_does_not_compact_before_the_history_grew() -> None:
    """Over the 50% trigger, but the last compaction (of the run's previous task) was a
    moment ago and the request fits: no compaction, the call goes out."""
    loop = Watching(calls=1, billed=9_000)
    recent = LastCompaction(freed=8_000, grown=10)
    conversation = _conversation(_history(12, 120), last_compaction=recent)
    end = drive(run_task(_setup(), conversation, Message("user", "go")), loop)
    assert end.status == "done" and loop.compactions == 0
    # The run's growth since is carried on to its next task.
    assert end.conversation.last_compaction is not None
    assert end.conversation.last_compaction.grown > 10
