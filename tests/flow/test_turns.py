"""A task's turns, driven by hand: the model is asked, answers, and the task ends."""

from __future__ import annotations

import pytest

from seri.pure.agent.effects import CallModel, ModelFailed, ModelReply, RunTool, ToolRun
from seri.pure.agent.task_records import Conversation
from seri.pure.agent.turn import run_task
from seri.pure.session.records import Message, Usage
from tests.flow.steps import Steps, answer, call, empty, setup, user


def test_a_task_without_tool_calls_is_one_model_call() -> None:
    """The prompt is stored first, then the model is asked, then its answer is stored."""
    steps = Steps(run_task(setup(), empty(), user("hello")))
    assert steps.stored == [user("hello")]
    request = steps.effect
    assert isinstance(request, CallModel)
    assert request.purpose == "turn"
    assert request.system_prompt == "You are seri."
    assert request.messages == (user("hello"),)
    assert request.max_tokens is None
    steps.send(answer("Hi.", usage=Usage(input_tokens=40)))
    assert steps.done
    end = steps.result
    assert (end.status, end.answer, end.turns) == ("done", "Hi.", 1)
    assert steps.stored[-1] == Message(role="assistant", text="Hi.")
    assert steps.recorded("turn_end") == [{"status": "done", "turns": 1}]
    assert end.conversation.last_input_tokens == 40


def test_the_turn_budget_ends_a_task_that_keeps_calling_tools() -> None:
    """Two turns allowed: after the second answer with a tool call, the task ends unfinished
    (and the second call still gets its result)."""
    steps = Steps(run_task(setup(max_turns=2), empty(), user("loop")))
    for turn in (1, 2):
        assert isinstance(steps.effect, CallModel)
        steps.send(answer("", call(f"c{turn}", "glob", pattern="*")))
        assert isinstance(steps.effect, RunTool)
        steps.send(ToolRun("a.py"))
    assert steps.done
    assert steps.result.status == "max_turns"
    assert "turn budget spent: 2 of 2" in steps.result.detail
    assert steps.recorded("turn_end") == [{"status": "max_turns", "turns": 2}]


def test_turns_used_before_count_against_the_budget() -> None:
    steps = Steps(run_task(setup(max_turns=3), empty(), user("go"), turns_used=3))
    assert steps.done
    assert steps.result.status == "max_turns"


def test_an_answer_cut_at_the_output_limit_is_kept_without_its_calls() -> None:
    steps = Steps(run_task(setup(), empty(), user("write")))
    cut = answer("Here is the start", call("c1", "write_file", path="a", content="x"))
    steps.send(ModelReply(cut.message, finish_reason="length"))
    assert steps.done
    assert steps.result.status == "length"
    kept = steps.stored[-1]
    assert (kept.text, kept.tool_calls, kept.kind) == ("Here is the start", (), "partial")
    assert "its unfinished tool call was dropped" in steps.result.detail


def test_a_failed_call_keeps_what_arrived_and_ends_the_task() -> None:
    steps = Steps(run_task(setup(), empty(), user("go")))
    partial = Message(role="assistant", text="Half an", kind="partial")
    steps.send(ModelFailed("the stream was cut", interrupted=True, partial=partial))
    assert steps.done
    assert (steps.result.status, steps.result.by_user) == ("interrupted", False)
    assert steps.stored[-1] == partial
    assert steps.recorded("model_call")[0]["finish_reason"] == "incomplete"


def test_ctrl_c_during_the_call_ends_the_task_as_the_persons() -> None:
    steps = Steps(run_task(setup(), empty(), user("go")))
    steps.send(ModelFailed("interrupted by user", interrupted=True, by_user=True))
    assert (steps.result.status, steps.result.by_user) == ("interrupted", True)


def test_an_answer_of_the_wrong_type_is_a_bug_that_is_named() -> None:
    """Each effect declares what it is answered with; anything else stops the flow."""
    steps = Steps(run_task(setup(), empty(), user("go")))
    with pytest.raises(TypeError, match="CallModel is answered with ModelReply or ModelFailed"):
        steps.send(ToolRun("not a model answer"))


def test_the_conversation_it_returns_is_what_it_stored() -> None:
    before = Conversation((user("earlier"), Message(role="assistant", text="yes")))
    steps = Steps(run_task(setup(), before, user("now")))
    steps.send(answer("done"))
    assert steps.result.conversation.history == (*before.history, *steps.stored)
