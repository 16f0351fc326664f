"""The cost budget, driven by hand: the loop asks what the run has spent before each call
and starts none once the budget is reached (or when the provider reports no cost)."""

from __future__ import annotations

import attrs

from seri.pure.agent.effects import CallModel, CountSpending, RunTool, ToolRun
from seri.pure.agent.turn import run_task
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.session.records import Usage
from tests.flow.steps import Steps, answer, call, empty, setup, user


def spent(*costs: float | None) -> UsageTotals:
    totals = UsageTotals()
    for cost in costs:
        totals = totals.add(Usage(input_tokens=10, cost=cost))
    return totals


def test_without_a_budget_the_loop_never_asks() -> None:
    steps = Steps(run_task(setup(), empty(), user("go")))
    assert isinstance(steps.effect, CallModel)


def test_the_budget_is_checked_before_every_call() -> None:
    steps = Steps(run_task(attrs.evolve(setup(), max_budget_usd=0.5), empty(), user("go")))
    assert isinstance(steps.effect, CountSpending)
    steps.send(spent())
    assert isinstance(steps.effect, CallModel)
    steps.send(answer("", call("c1", "glob", pattern="*"), usage=Usage(cost=0.3)))
    assert isinstance(steps.effect, RunTool)
    steps.send(ToolRun("a.py"))
    assert isinstance(steps.effect, CountSpending)
    steps.send(spent(0.3))  # under the budget: the next call starts
    assert isinstance(steps.effect, CallModel)
    steps.send(answer("", call("c2", "glob", pattern="*"), usage=Usage(cost=0.2)))
    steps.send(ToolRun("a.py"))
    assert isinstance(steps.effect, CountSpending)
    steps.send(spent(0.3, 0.2))  # reached: no third call
    assert steps.done
    assert (steps.result.status, steps.result.turns) == ("budget", 2)
    assert "$0.5000 of the $0.5 allowed" in steps.result.detail
    assert steps.recorded("turn_end")[0]["status"] == "budget"


def test_a_call_without_a_cost_ends_the_run_as_an_error() -> None:
    steps = Steps(run_task(attrs.evolve(setup(), max_budget_usd=1.0), empty(), user("go")))
    steps.send(spent())
    steps.send(answer("", call("c1", "glob", pattern="*")))
    steps.send(ToolRun("a.py"))
    steps.send(spent(None))
    assert steps.done
    assert steps.result.status == "error"
    assert "reported no cost for 1 of the run's 1 model call" in steps.result.detail
