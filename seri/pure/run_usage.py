"""What one run of seri cost, added up over its model calls: tokens, cache reads, money.

The cached share (cache reads over input tokens) tells whether prompt caching happened; it is
recorded at the end of the run and shown to the person there.
"""

from __future__ import annotations

from typing import Any

import attrs

from seri.pure.records import Usage


@attrs.frozen
class RunUsage:
    calls: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    upstream_cost: float | None = None

    def add(self, usage: Usage | None) -> RunUsage:
        if usage is None:
            return self
        return RunUsage(
            calls=self.calls + 1,
            input_tokens=self.input_tokens + usage.input_tokens,
            cached_tokens=self.cached_tokens + usage.cached_tokens,
            cache_write_tokens=self.cache_write_tokens + usage.cache_write_tokens,
            output_tokens=self.output_tokens + usage.output_tokens,
            cost=_plus(self.cost, usage.cost),
            upstream_cost=_plus(self.upstream_cost, usage.upstream_cost),
        )

    def cached_share(self) -> float | None:
        """Cache reads as a fraction of input tokens; None before any input was billed."""
        if self.input_tokens <= 0:
            return None
        return min(self.cached_tokens / self.input_tokens, 1.0)

    def record(self) -> dict[str, Any]:
        share = self.cached_share()
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "cached_share": None if share is None else round(share, 4),
            "cost": self.cost,
            "upstream_cost": self.upstream_cost,
        }

    def summary(self) -> str:
        """One line for the end of a run, e.g. ``prompt cache: 91% of 412,300 input tokens``."""
        share = self.cached_share() or 0.0
        line = (
            f"prompt cache: {share:.0%} of {self.input_tokens:,} input tokens read from cache "
            f"over {self.calls} call{'s' * (self.calls != 1)}"
        )
        if self.cache_write_tokens:
            line += f", {self.cache_write_tokens:,} written"
        total = _plus(self.cost, self.upstream_cost)
        if total is not None:
            line += f"; cost ${total:.4f}"
        return line


def _plus(total: float | None, more: float | None) -> float | None:
    if more is None:
        return total
    return more if total is None else total + more
