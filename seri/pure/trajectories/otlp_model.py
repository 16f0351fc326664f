"""What an OTLP export carries: spans, span events, histogram points, the resource.

These are the values the GenAI mapping produces and the two encodings (protobuf and JSON)
write, shaped after the OpenTelemetry protocol's own messages so that each encoder is a
direct walk. Times are Unix nanoseconds; ids are raw bytes (16 for a trace, 8 for a span).
"""

from __future__ import annotations

import attrs

# An attribute value as OTLP allows it: a primitive, or a homogeneous array of primitives.
Scalar = str | bool | int | float
AttrValue = Scalar | tuple[Scalar, ...]
Attributes = tuple[tuple[str, AttrValue], ...]

# Span kinds and status codes: the protocol's enum numbers.
KIND_INTERNAL = 1
KIND_CLIENT = 3
STATUS_UNSET = 0
STATUS_OK = 1
STATUS_ERROR = 2
# Histogram points each cover their own window (start, time], not everything since start-up.
TEMPORALITY_DELTA = 1

NANOS = 1_000_000_000


def nanos(seconds: float) -> int:
    """Epoch seconds as Unix nanoseconds, to the millisecond: the precision the recordings
    are exported at, so a span sent live and the same span re-sent from the store agree."""
    return round(seconds * 1000) * 1_000_000


@attrs.frozen
class SpanEvent:
    name: str
    time_ns: int
    attributes: Attributes = ()


@attrs.frozen
class Span:
    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes  # b"" for a trace's root
    name: str
    kind: int
    start_ns: int
    end_ns: int
    attributes: Attributes = ()
    events: tuple[SpanEvent, ...] = ()
    status_code: int = STATUS_UNSET
    status_message: str = ""

    def attribute(self, key: str) -> AttrValue | None:
        return next((value for name, value in self.attributes if name == key), None)


@attrs.frozen
class HistogramPoint:
    attributes: Attributes
    start_ns: int
    time_ns: int
    count: int
    total: float
    bucket_counts: tuple[int, ...]
    bounds: tuple[float, ...]
    minimum: float
    maximum: float


@attrs.frozen
class Histogram:
    name: str
    unit: str
    description: str
    points: tuple[HistogramPoint, ...]


@attrs.frozen
class Producer:
    """Who sends: the resource (service.name and the rest) and the instrumentation scope."""

    resource: Attributes
    scope_name: str
    scope_version: str
