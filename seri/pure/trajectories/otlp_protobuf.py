"""OTLP's protobuf encoding (``http/protobuf``), written directly from the field numbers.

Only the messages an export sends are written (ExportTraceServiceRequest and
ExportMetricsServiceRequest with histograms) and only the partial-success answer is read,
so a few wire-format primitives cover it and seri needs no protobuf runtime to export.
The field numbers are opentelemetry-proto's (v1); the tests decode every request with
the official generated messages, so a wrong number or wire type fails there.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator

from seri.pure.trajectories.otlp_model import (
    Attributes,
    AttrValue,
    Histogram,
    HistogramPoint,
    Producer,
    Span,
    SpanEvent,
)

_VARINT, _FIXED64, _LENGTH, _FIXED32 = 0, 1, 2, 5
_U64 = 0xFFFF_FFFF_FFFF_FFFF
_FIXED64_OF = struct.Struct("<Q").pack
_DOUBLE_OF = struct.Struct("<d").pack


def _varint(value: int) -> bytes:
    value &= _U64  # a negative int64 is its two's complement, ten bytes long
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _tag(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def _message(field: int, payload: bytes) -> bytes:
    return _tag(field, _LENGTH) + _varint(len(payload)) + payload


def _utf8(value: str) -> bytes:
    """Protobuf strings must be valid UTF-8: a lone surrogate (JSON allows one) becomes '?'."""
    return value.encode("utf-8", "replace")


def _text(field: int, value: str) -> bytes:
    return _message(field, _utf8(value)) if value else b""


def _fixed64(field: int, value: int) -> bytes:
    return _tag(field, _FIXED64) + _FIXED64_OF(value & _U64)


def _double(field: int, value: float) -> bytes:
    return _tag(field, _FIXED64) + _DOUBLE_OF(value)


def _number(field: int, value: int) -> bytes:
    return _tag(field, _VARINT) + _varint(value) if value else b""


# -- common messages ---------------------------------------------------------------------------


def _any_value(value: AttrValue) -> bytes:
    """AnyValue: a oneof, so a value equal to its type's default is still written."""
    if isinstance(value, str):
        raw = _utf8(value)
        return _tag(1, _LENGTH) + _varint(len(raw)) + raw
    if isinstance(value, bool):
        return _tag(2, _VARINT) + _varint(int(value))
    if isinstance(value, int):
        return _tag(3, _VARINT) + _varint(value)
    if isinstance(value, float):
        return _double(4, value)
    return _message(5, b"".join(_message(1, _any_value(item)) for item in value))


def _attributes(field: int, attributes: Attributes) -> bytes:
    return b"".join(
        _message(field, _text(1, key) + _message(2, _any_value(value))) for key, value in attributes
    )


def _producer_parts(producer: Producer) -> tuple[bytes, bytes]:
    """The Resource message and the InstrumentationScope message."""
    resource = _attributes(1, producer.resource)
    scope = _text(1, producer.scope_name) + _text(2, producer.scope_version)
    return resource, scope


# -- traces ------------------------------------------------------------------------------------


def _event(event: SpanEvent) -> bytes:
    return _fixed64(1, event.time_ns) + _text(2, event.name) + _attributes(3, event.attributes)


def _span(span: Span) -> bytes:
    parts = [
        _message(1, span.trace_id),
        _message(2, span.span_id),
        _message(4, span.parent_span_id) if span.parent_span_id else b"",
        _text(5, span.name),
        _number(6, span.kind),
        _fixed64(7, span.start_ns),
        _fixed64(8, span.end_ns),
        _attributes(9, span.attributes),
        *(_message(11, _event(event)) for event in span.events),
    ]
    if span.status_code or span.status_message:
        parts.append(_message(15, _text(2, span.status_message) + _number(3, span.status_code)))
    return b"".join(parts)


def trace_request(producer: Producer, spans: Iterable[Span]) -> bytes:
    """An ExportTraceServiceRequest holding ``spans`` under one resource and scope."""
    resource, scope = _producer_parts(producer)
    scope_spans = _message(1, scope) + b"".join(_message(2, _span(span)) for span in spans)
    return _message(1, _message(1, resource) + _message(2, scope_spans))


# -- metrics -----------------------------------------------------------------------------------


def _point(point: HistogramPoint) -> bytes:
    return b"".join(
        (
            _attributes(9, point.attributes),
            _fixed64(2, point.start_ns),
            _fixed64(3, point.time_ns),
            _fixed64(4, point.count),
            _double(5, point.total),
            _message(6, b"".join(_FIXED64_OF(count) for count in point.bucket_counts)),
            _message(7, b"".join(_DOUBLE_OF(bound) for bound in point.bounds)),
            _double(11, point.minimum),
            _double(12, point.maximum),
        )
    )


def _histogram(metric: Histogram, temporality: int) -> bytes:
    points = b"".join(_message(1, _point(point)) for point in metric.points)
    body = points + _number(2, temporality)
    return (
        _text(1, metric.name)
        + _text(2, metric.description)
        + _text(3, metric.unit)
        + _message(9, body)
    )


def metrics_request(producer: Producer, metrics: Iterable[Histogram], temporality: int) -> bytes:
    """An ExportMetricsServiceRequest holding histograms under one resource and scope."""
    resource, scope = _producer_parts(producer)
    scope_metrics = _message(1, scope) + b"".join(
        _message(2, _histogram(metric, temporality)) for metric in metrics
    )
    return _message(1, _message(1, resource) + _message(2, scope_metrics))


# -- the answer --------------------------------------------------------------------------------


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs of one message: ints for numbers, bytes for the rest."""
    at = 0
    while at < len(data):
        key, at = _read_varint(data, at)
        field, wire = key >> 3, key & 7
        if wire == _VARINT:
            number, at = _read_varint(data, at)
            yield field, number
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            yield field, data[at : at + size]
            at += size
        elif wire == _LENGTH:
            size, at = _read_varint(data, at)
            yield field, data[at : at + size]
            at += size
        else:
            raise ValueError(f"unexpected wire type {wire}")
        if at > len(data):
            raise ValueError("truncated field")


def partial_success(body: bytes) -> tuple[int, str]:
    """What an Export*ServiceResponse says was refused: (items rejected, the receiver's
    message). Both fields (rejected_spans / rejected_data_points = 1, error_message = 2)
    have the same numbers in the trace and metrics answers. (0, "") when all was taken."""
    rejected, message = 0, ""
    for field, value in _fields(body):
        if field != 1 or not isinstance(value, bytes):
            continue
        for inner, item in _fields(value):
            if inner == 1 and isinstance(item, int):
                rejected = item - (1 << 64) if item >> 63 else item
            elif inner == 2 and isinstance(item, bytes):
                message = item.decode("utf-8", "replace")
    return rejected, message
