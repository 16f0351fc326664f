"""The GenAI client metrics: ``gen_ai.client.token.usage`` and
``gen_ai.client.operation.duration``, histograms with the conventions' bucket boundaries.

The trace mapping notes one observation per measured value; here they are added up into
one histogram point per metric and attribute set over a window (delta temporality).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Mapping

import attrs

from seri.pure.trajectories.otlp_model import Attributes, Histogram, HistogramPoint

TOKEN_USAGE = "gen_ai.client.token.usage"  # noqa: S105 (a metric, not a secret)
OPERATION_DURATION = "gen_ai.client.operation.duration"

# The boundaries the conventions ask for (gen-ai-metrics.md).
_TOKEN_BOUNDS = tuple(float(4**power) for power in range(14))  # 1, 4, 16, ..., 67108864
_DURATION_BOUNDS = (
    0.01,
    0.02,
    0.04,
    0.08,
    0.16,
    0.32,
    0.64,
    1.28,
    2.56,
    5.12,
    10.24,
    20.48,
    40.96,
    81.92,
)


@attrs.frozen
class MetricSpec:
    unit: str
    description: str
    bounds: tuple[float, ...]


METRICS = {
    TOKEN_USAGE: MetricSpec("{token}", "Number of input and output tokens used.", _TOKEN_BOUNDS),
    OPERATION_DURATION: MetricSpec("s", "GenAI operation duration.", _DURATION_BOUNDS),
}


@attrs.frozen
class MetricObservation:
    """One measured value: a call's input tokens, its output tokens, or its duration."""

    metric: str
    value: float
    attributes: Attributes
    time_ns: int
    trace_id: bytes = b""


@attrs.frozen
class MetricSum:
    count: int
    total: float
    minimum: float
    maximum: float
    buckets: tuple[int, ...]

    def plus(self, value: float, bucket: int) -> MetricSum:
        buckets = list(self.buckets)
        buckets[bucket] += 1
        return MetricSum(
            self.count + 1,
            self.total + value,
            min(self.minimum, value),
            max(self.maximum, value),
            tuple(buckets),
        )


def bucket_index(bounds: tuple[float, ...], value: float) -> int:
    """OTLP's explicit buckets: bucket i holds (bounds[i-1], bounds[i]], the last (b[-1], inf)."""
    return bisect_left(bounds, value)


MetricKey = tuple[str, Attributes]


def accumulate(
    sums: Mapping[MetricKey, MetricSum], observations: Iterable[MetricObservation]
) -> dict[MetricKey, MetricSum]:
    """``sums`` with ``observations`` added (a new mapping; ``sums`` is left as it was)."""
    added = dict(sums)
    for seen in observations:
        spec = METRICS[seen.metric]
        key = (seen.metric, seen.attributes)
        current = added.get(key)
        if current is None:
            empty = (0,) * (len(spec.bounds) + 1)
            current = MetricSum(0, 0.0, seen.value, seen.value, empty)
        added[key] = current.plus(seen.value, bucket_index(spec.bounds, seen.value))
    return added


def histograms_of(
    sums: Mapping[MetricKey, MetricSum], start_ns: int, time_ns: int
) -> tuple[Histogram, ...]:
    """One point per metric and attribute set, covering (start_ns, time_ns]."""
    found: dict[str, list[HistogramPoint]] = {}
    for (metric, attributes), total in sums.items():
        found.setdefault(metric, []).append(
            HistogramPoint(
                attributes=attributes,
                start_ns=start_ns,
                time_ns=max(time_ns, start_ns),
                count=total.count,
                total=total.total,
                bucket_counts=total.buckets,
                bounds=METRICS[metric].bounds,
                minimum=total.minimum,
                maximum=total.maximum,
            )
        )
    return tuple(
        Histogram(metric, METRICS[metric].unit, METRICS[metric].description, tuple(points))
        for metric, points in found.items()
    )


def histograms(
    observations: Iterable[MetricObservation], start_ns: int, time_ns: int
) -> tuple[Histogram, ...]:
    return histograms_of(accumulate({}, observations), start_ns, time_ns)
