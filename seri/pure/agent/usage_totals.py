"""Tokens and money of model calls, added up: the one running total seri keeps.

The same record serves the end-of-run prompt-cache line and the ``run_usage`` event (the
model caller's calls), ``/cost`` and ``/status`` (the calls recorded in this run, and in the
whole session from its recordings), and the OpenTelemetry export (a span's calls). A call
the provider said nothing about still counts as a call: ``reported`` counts those it did.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.session.records import Usage


@attrs.frozen
class UsageTotals:
    calls: int = 0
    reported: int = 0  # calls whose provider said what they used
    priced: int = 0  # calls whose provider said what they cost
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    # What the provider charged, and what an upstream (BYOK) provider did; None: never said.
    cost: float | None = None
    upstream_cost: float | None = None

    @classmethod
    def of_call(cls, usage: Usage | None) -> UsageTotals:
        """One call, with what its provider reported (None: nothing)."""
        if usage is None:
            return cls(calls=1)
        return cls(
            calls=1,
            reported=1,
            priced=int(usage.cost is not None or usage.upstream_cost is not None),
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cached_tokens=usage.cached_tokens,
            cache_write_tokens=usage.cache_write_tokens,
            reasoning_tokens=usage.reasoning_tokens,
            cost=usage.cost,
            upstream_cost=usage.upstream_cost,
        )

    @classmethod
    def of_record(cls, recorded: Any) -> UsageTotals:
        """One call's usage as a recording holds it (``{"reported": false}`` when unknown;
        see ``events.usage_record``); anything unreadable in it counts as nothing."""
        if not isinstance(recorded, Mapping) or recorded.get("reported") is False:
            return cls(calls=1)
        cost = money(recorded.get("cost"))
        upstream_cost = money(recorded.get("upstream_cost"))
        return cls(
            calls=1,
            reported=1,
            priced=int(cost is not None or upstream_cost is not None),
            input_tokens=count(recorded.get("input_tokens")),
            output_tokens=count(recorded.get("output_tokens")),
            cached_tokens=count(recorded.get("cached_tokens")),
            cache_write_tokens=count(recorded.get("cache_write_tokens")),
            reasoning_tokens=count(recorded.get("reasoning_tokens")),
            cost=cost,
            upstream_cost=upstream_cost,
        )

    def plus(self, other: UsageTotals) -> UsageTotals:
        return UsageTotals(
            calls=self.calls + other.calls,
            reported=self.reported + other.reported,
            priced=self.priced + other.priced,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost=_plus(self.cost, other.cost),
            upstream_cost=_plus(self.upstream_cost, other.upstream_cost),
        )

    def add(self, usage: Usage | None) -> UsageTotals:
        """These totals and one more call."""
        return self.plus(UsageTotals.of_call(usage))

    @property
    def unreported(self) -> int:
        return self.calls - self.reported

    @property
    def total_cost(self) -> float | None:
        """What the calls cost in all (upstream charges included); None when none said."""
        return _plus(self.cost, self.upstream_cost)

    def cached_share(self) -> float | None:
        """Cache reads as a fraction of input tokens; None before any input was billed."""
        if self.input_tokens <= 0:
            return None
        return min(self.cached_tokens / self.input_tokens, 1.0)

    def summary(self) -> str:
        """One line for the end of a run, e.g. ``prompt cache: 91% of 412,300 input tokens``."""
        share = self.cached_share() or 0.0
        calls = self.reported
        line = (
            f"prompt cache: {share:.0%} of {self.input_tokens:,} input tokens read from cache "
            f"over {calls} call{'s' * (calls != 1)}"
        )
        if self.cache_write_tokens:
            line += f", {self.cache_write_tokens:,} written"
        total = self.total_cost
        if total is not None:
            line += f"; cost ${total:.4f}"
        return line


def count(value: Any) -> int:
    """A token count from a record: positive ints only, anything else counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def money(value: Any) -> float | None:
    """An amount from a record: a finite number, else none."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _plus(total: float | None, more: float | None) -> float | None:
    if more is None:
        return total
    return more if total is None else total + more
