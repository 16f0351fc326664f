"""``--max-budget-usd``: whether the run may start another model call.

The loop asks before each call of a task (``CountSpending``) and decides here: once the
cost the provider reported for the run's calls (its tasks', the summarizer's, its
subagents') has reached the budget, no call starts. A provider that does not report what a
call cost cannot be held to a budget; seri cannot know that before the first call answers,
so the first call that comes back without a cost ends the run as an error before another
starts (rather than running on unbounded, which is what a budget is set to prevent).
"""

from __future__ import annotations

from typing import Literal

import attrs

from seri.pure.agent.usage_totals import UsageTotals


@attrs.frozen
class BudgetStop:
    """Why no call may start: ``budget`` (spent) or ``error`` (no cost reported)."""

    status: Literal["budget", "error"]
    detail: str


def budget_stop(limit: float, spent: UsageTotals) -> BudgetStop | None:
    """None while another call may start under ``limit`` (USD), else why not."""
    unpriced = spent.calls - spent.priced
    if unpriced > 0:
        calls = "call" if spent.calls == 1 else "calls"
        return BudgetStop(
            "error",
            f"--max-budget-usd {limit:g} cannot be kept: the provider reported no cost for "
            f"{unpriced} of the run's {spent.calls} model {calls} (OpenRouter reports it; "
            "many local servers do not); run without a budget, or use a provider that does",
        )
    cost = spent.total_cost or 0.0
    if cost >= limit:
        return BudgetStop(
            "budget",
            f"cost budget spent: the run's calls cost ${cost:.4f} of the ${limit:g} allowed "
            "(--max-budget-usd or max_budget_usd in config.json)",
        )
    return None
