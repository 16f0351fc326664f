"""One OTLP/HTTP request's body in the chosen protocol, and what its answer says."""

from __future__ import annotations

import json
from collections.abc import Iterable

from seri.pure.inputs import json_text
from seri.pure.trajectories import otlp_json, otlp_protobuf
from seri.pure.trajectories.otlp_model import TEMPORALITY_DELTA, Histogram, Producer, Span
from seri.pure.trajectories.otlp_settings import Protocol

CONTENT_TYPES: dict[Protocol, str] = {
    "http/protobuf": "application/x-protobuf",
    "http/json": "application/json",
}


def _json_bytes(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")


def traces_body(protocol: Protocol, producer: Producer, spans: Iterable[Span]) -> bytes:
    if protocol == "http/json":
        return _json_bytes(otlp_json.trace_request(producer, spans))
    return otlp_protobuf.trace_request(producer, spans)


def metrics_body(protocol: Protocol, producer: Producer, metrics: Iterable[Histogram]) -> bytes:
    if protocol == "http/json":
        return _json_bytes(otlp_json.metrics_request(producer, metrics, TEMPORALITY_DELTA))
    return otlp_protobuf.metrics_request(producer, metrics, TEMPORALITY_DELTA)


def refused(protocol: Protocol, content_type: str, body: bytes) -> tuple[int, str]:
    """(items the receiver refused, its message) from a successful answer's body.

    Receivers answer in the request's encoding, but some answer JSON to anything (or send
    nothing): the answer's own content type decides, and what cannot be read is taken as
    "all accepted", which is what an empty answer means."""
    if not body:
        return 0, ""
    try:
        if "json" in content_type or (protocol == "http/json" and "protobuf" not in content_type):
            return otlp_json.partial_success(json_text.loads(body))
        return otlp_protobuf.partial_success(body)
    except ValueError:
        return 0, ""
