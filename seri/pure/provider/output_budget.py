"""When the provider says only the output budget is too big, how far to lower it.

Two answers ask for a smaller ``max_tokens`` rather than a shorter conversation: an overflow
whose numbers show the input alone fits the window (``A + B > C`` with ``A < C``, or
``(N of text input, M in the output)``), and OpenRouter's 402 "can only afford N tokens".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from seri.pure.agent.effects import CallModel, Flow, ModelFailed, ModelReply, Record, Say, perform
from seri.pure.trajectories import events

if TYPE_CHECKING:
    from seri.pure.provider.provider_failure import ProviderFailure

# Slack under the window for the provider's own counting, and the smallest budget worth a try.
OUTPUT_MARGIN = 64
MIN_OUTPUT_TOKENS = 256
_KEYS = ("max_tokens", "max_completion_tokens")


def lowered_output_budget(
    failure: ProviderFailure, sampling: Mapping[str, Any]
) -> tuple[str, int, str] | None:
    """``(key, new budget, why)`` or None when lowering the budget would not help.

    The key is the one config.json set, else ``max_tokens``. None when the new budget would
    be below ``MIN_OUTPUT_TOKENS`` or not below the budget already set (a second lowering to
    the same value would only repeat the refusal).
    """
    key = next((k for k in _KEYS if k in sampling), "max_tokens")
    current = sampling.get(key)
    room: int | None = None
    why = ""
    numbers = failure.overflow
    if (
        failure.kind == "context_overflow"
        and numbers is not None
        and numbers.input_fits()
        and numbers.limit is not None
        and numbers.input_tokens is not None
    ):
        room = numbers.limit - numbers.input_tokens - OUTPUT_MARGIN
        why = "so that the answer fits the window"
    elif failure.kind == "credits" and failure.affordable_tokens is not None:
        room = failure.affordable_tokens - OUTPUT_MARGIN
        why = "to what the credit left can pay for"
    if room is None or room < MIN_OUTPUT_TOKENS:
        return None
    if isinstance(current, int) and not isinstance(current, bool) and room >= current:
        return None
    return key, room, why


@attrs.frozen
class OutputBudget:
    """The answer budget of a run's requests: the sampling key it goes under, what config.json
    set (None: the provider's default), and what this run lowered it to for the rest of the
    run (a 402 that named what the credit left can pay for; None: not lowered)."""

    key: str = "max_tokens"
    configured: int | None = None
    lowered: int | None = None

    @classmethod
    def of(cls, sampling: Mapping[str, Any]) -> OutputBudget:
        key = next((k for k in _KEYS if k in sampling), "max_tokens")
        value = sampling.get(key)
        configured = value if isinstance(value, int) and not isinstance(value, bool) else None
        return cls(key, configured)

    def sampling(self) -> dict[str, Any]:
        """The budget as the sampling settings the next request goes out with."""
        return {self.key: self.configured if self.lowered is None else self.lowered}


def call_within_budget(
    request: CallModel, budget: OutputBudget
) -> Flow[tuple[ModelReply | ModelFailed, OutputBudget]]:
    """One model call. When the provider refused it only because of its output budget (an
    overflow whose numbers show the input fits, a 402 naming what the credit can pay for),
    the budget is lowered and the call sent once more, rather than compacting or giving up.

    The lowered budget holds for that retry only after an overflow (the room left beside
    this input, not beside the next), and for the rest of the run after a 402; the budget
    that comes back says which.
    """
    request = attrs.evolve(request, max_tokens=budget.lowered)
    reply = yield from perform(request)
    if not isinstance(reply, ModelFailed) or reply.refused is None:
        return reply, budget
    lowered = lowered_output_budget(reply.refused, budget.sampling())
    if lowered is None:
        return reply, budget
    key, room, why = lowered
    yield Record(events.OutputBudgetLowered(key=key, to=room, why=why))
    yield Say(f"{key} lowered to {room} {why}")
    retry = yield from perform(attrs.evolve(request, max_tokens=room))
    if reply.refused.kind == "credits":
        budget = attrs.evolve(budget, lowered=room)
    return retry, budget
