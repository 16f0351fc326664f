"""OTLP's JSON encoding (``http/json``, and the lines of the OTLP file format).

The protocol's JSON is proto3's JSON mapping with its own rules: keys in lowerCamelCase,
trace and span ids as hex (not base64), enums as numbers, 64-bit integers as decimal
strings. The tests parse every request into the official messages to hold it to that.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from seri.pure.trajectories.otlp_model import (
    Attributes,
    AttrValue,
    Histogram,
    HistogramPoint,
    Producer,
    Span,
    SpanEvent,
)


def _any_value(value: AttrValue) -> dict[str, Any]:
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    return {"arrayValue": {"values": [_any_value(item) for item in value]}}


def _attributes(attributes: Attributes) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in attributes]


def _producer_parts(producer: Producer) -> tuple[dict[str, Any], dict[str, Any]]:
    resource = {"attributes": _attributes(producer.resource)}
    scope = {"name": producer.scope_name, "version": producer.scope_version}
    return resource, scope


def _event(event: SpanEvent) -> dict[str, Any]:
    return {
        "timeUnixNano": str(event.time_ns),
        "name": event.name,
        "attributes": _attributes(event.attributes),
    }


def _span(span: Span) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id.hex(),
        "spanId": span.span_id.hex(),
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_ns),
        "endTimeUnixNano": str(span.end_ns),
        "attributes": _attributes(span.attributes),
        "events": [_event(event) for event in span.events],
    }
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id.hex()
    if span.status_code or span.status_message:
        out["status"] = {"code": span.status_code, "message": span.status_message}
    return out


def trace_request(producer: Producer, spans: Iterable[Span]) -> dict[str, Any]:
    """An ExportTraceServiceRequest as a JSON value (``json.dumps`` it to send)."""
    resource, scope = _producer_parts(producer)
    return {
        "resourceSpans": [
            {
                "resource": resource,
                "scopeSpans": [{"scope": scope, "spans": [_span(span) for span in spans]}],
            }
        ]
    }


def _point(point: HistogramPoint) -> dict[str, Any]:
    return {
        "attributes": _attributes(point.attributes),
        "startTimeUnixNano": str(point.start_ns),
        "timeUnixNano": str(point.time_ns),
        "count": str(point.count),
        "sum": point.total,
        "bucketCounts": [str(count) for count in point.bucket_counts],
        "explicitBounds": list(point.bounds),
        "min": point.minimum,
        "max": point.maximum,
    }


def metrics_request(
    producer: Producer, metrics: Iterable[Histogram], temporality: int
) -> dict[str, Any]:
    """An ExportMetricsServiceRequest of histograms as a JSON value."""
    resource, scope = _producer_parts(producer)
    return {
        "resourceMetrics": [
            {
                "resource": resource,
                "scopeMetrics": [
                    {
                        "scope": scope,
                        "metrics": [
                            {
                                "name": metric.name,
                                "description": metric.description,
                                "unit": metric.unit,
                                "histogram": {
                                    "dataPoints": [_point(point) for point in metric.points],
                                    "aggregationTemporality": temporality,
                                },
                            }
                            for metric in metrics
                        ],
                    }
                ],
            }
        ]
    }


def partial_success(answer: Any) -> tuple[int, str]:
    """What a JSON Export*ServiceResponse says was refused; (0, "") when all was taken."""
    if not isinstance(answer, dict):
        return 0, ""
    part = answer.get("partialSuccess") or answer.get("partial_success")
    if not isinstance(part, dict):
        return 0, ""
    rejected: Any = next(
        (part[key] for key in ("rejectedSpans", "rejectedDataPoints") if key in part), 0
    )
    try:
        count = int(rejected)
    except (TypeError, ValueError):
        count = 0
    message = part.get("errorMessage", "")
    return count, message if isinstance(message, str) else ""
