"""Lowering the output budget, a decision of the loop, driven by hand.

When the provider refuses a request only because of its answer budget (an overflow whose
numbers show the input fits; a 402 naming what the credit left can pay for), the loop lowers
``max_tokens`` and sends the same request once more, instead of compacting or giving up.
"""

from __future__ import annotations

import json

from seri.pure.agent.effects import ApplyCompaction, CallModel, ModelFailed, ModelReply
from seri.pure.agent.task_records import Conversation
from seri.pure.agent.turn import compact_on_demand, run_task
from seri.pure.provider.output_budget import MIN_OUTPUT_TOKENS, OUTPUT_MARGIN, OutputBudget
from seri.pure.provider.provider_failure import OverflowNumbers, ProviderFailure
from seri.pure.session.records import Message
from tests.flow.steps import Steps, answer, empty, setup, user


def output_overflow(limit: int = 8_192, input_tokens: int = 5_000) -> ModelFailed:
    """The provider's "A + B > C" with the input alone under the window."""
    numbers = OverflowNumbers(limit=limit, input_tokens=input_tokens, output_tokens=8_000)
    failure = ProviderFailure("context_overflow", "too long", status=400, overflow=numbers)
    return ModelFailed("too long", overflow=True, overflow_numbers=numbers, refused=failure)


def out_of_credit(affordable: int) -> ModelFailed:
    failure = ProviderFailure(
        "credits", "can only afford", status=402, affordable_tokens=affordable
    )
    return ModelFailed("can only afford", refused=failure)


def test_an_output_only_overflow_lowers_max_tokens_for_that_call_only() -> None:
    steps = Steps(run_task(setup(), empty(), user("go")))
    assert steps.effect.max_tokens is None
    steps.send(output_overflow())
    retry = steps.effect
    assert isinstance(retry, CallModel) and retry.purpose == "turn"
    assert retry.max_tokens == 8_192 - 5_000 - OUTPUT_MARGIN
    assert retry.messages == (user("go"),)
    assert steps.recorded("output_budget_lowered") == [
        {"key": "max_tokens", "to": retry.max_tokens, "why": "so that the answer fits the window"}
    ]
    assert steps.said == [
        f"max_tokens lowered to {retry.max_tokens} so that the answer fits the window"
    ]
    assert steps.recorded("overflow") == [], "an output-only overflow compacts nothing"
    steps.send(answer("short answer"))
    assert steps.result.status == "done"
    assert steps.result.budget.lowered is None, "held for the retry of that call only"


def test_a_402_lowers_it_for_the_rest_of_the_run() -> None:
    steps = Steps(run_task(setup(), empty(), user("go")))
    steps.send(out_of_credit(1_000))
    assert steps.effect.max_tokens == 1_000 - OUTPUT_MARGIN
    steps.send(answer("cheap"))
    budget = steps.result.budget
    assert budget.lowered == 1_000 - OUTPUT_MARGIN
    later = Steps(run_task(setup(budget=budget), empty(), user("again")))
    assert later.effect.max_tokens == 1_000 - OUTPUT_MARGIN


def test_the_configured_key_is_the_one_lowered() -> None:
    budget = OutputBudget.of({"max_completion_tokens": 8_000})
    steps = Steps(run_task(setup(budget=budget), empty(), user("go")))
    steps.send(output_overflow())
    assert steps.recorded("output_budget_lowered")[0]["key"] == "max_completion_tokens"


def test_a_budget_that_cannot_go_lower_is_not_retried() -> None:
    """Too little room left for an answer worth having: the overflow is an overflow."""
    steps = Steps(run_task(setup(), empty(), user("go")))
    steps.send(output_overflow(limit=5_000 + OUTPUT_MARGIN + MIN_OUTPUT_TOKENS - 1))
    assert steps.recorded("output_budget_lowered") == []
    assert steps.recorded("overflow") != []


def test_a_second_refusal_after_lowering_is_the_overflow_path() -> None:
    history = tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text="word " * 700) for n in range(12)
    )
    conversation = Conversation(history, total_chars=sum(len(m.text) for m in history))
    steps = Steps(run_task(setup(), conversation, user("go")))
    steps.send(output_overflow())
    assert isinstance(steps.effect, CallModel) and steps.effect.max_tokens is not None
    steps.send(ModelFailed("too long", overflow=True))
    assert len(steps.recorded("output_budget_lowered")) == 1
    assert steps.recorded("overflow")[0]["purpose"] == "turn"
    assert isinstance(steps.effect, CallModel) and steps.effect.purpose == "summary"


def test_the_summarizers_requests_are_lowered_the_same_way() -> None:
    history = tuple(
        Message(role="user" if n % 2 == 0 else "assistant", text="word " * 700) for n in range(12)
    )
    conversation = Conversation(history, total_chars=sum(len(m.text) for m in history))
    steps = Steps(compact_on_demand(setup(context_window=16_000), conversation, ""))
    assert steps.effect.purpose == "summary"
    steps.send(out_of_credit(2_000))
    assert steps.effect.purpose == "summary"
    assert steps.effect.max_tokens == 2_000 - OUTPUT_MARGIN
    recap = Message(role="assistant", text=json.dumps({"goal": "g"}))
    steps.summarize(ModelReply(recap))
    assert isinstance(steps.effect, ApplyCompaction)
    steps.send(True)
    assert steps.result.not_compacted is None
    assert steps.result.budget.lowered == 2_000 - OUTPUT_MARGIN
