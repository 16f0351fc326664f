"""A loopback OTLP/HTTP receiver for the tests, decoding with the official messages.

It takes ``POST /v1/traces`` and ``POST /v1/metrics`` in protobuf (``application/x-protobuf``)
or JSON (``application/json``), gzip-compressed or not, and keeps each request decoded into
opentelemetry-proto's ExportTraceServiceRequest / ExportMetricsServiceRequest. JSON goes
through ``json_format.ParseDict`` after its hex ids are turned into the bytes protobuf's own
JSON mapping expects, so a field name, type or enum that OTLP/JSON does not allow fails the
parse. What seri sends is thus held to the protocol's definition, not to seri's reading of it.

A test can script the answers (``answers``: a list of (status, body) taken in turn) and see
the headers each request came with.
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_ids_to_base64(value: Any) -> Any:
    """OTLP/JSON writes ids as hex; protobuf's JSON mapping reads bytes as base64."""
    if isinstance(value, list):
        return [_hex_ids_to_base64(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key in _ID_KEYS and isinstance(item, str):
            out[key] = base64.b64encode(bytes.fromhex(item)).decode()
        else:
            out[key] = _hex_ids_to_base64(item)
    return out


def parse_json_traces(text: str | bytes) -> ExportTraceServiceRequest:
    message = ExportTraceServiceRequest()
    json_format.ParseDict(_hex_ids_to_base64(json.loads(text)), message)
    return message


def parse_json_metrics(text: str | bytes) -> ExportMetricsServiceRequest:
    message = ExportMetricsServiceRequest()
    json_format.ParseDict(_hex_ids_to_base64(json.loads(text)), message)
    return message


def value_of(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(item) for item in value.array_value.values)
    if kind is None:
        return None
    return getattr(value, kind)


def attributes_of(pairs: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for pair in pairs:
        assert isinstance(pair, KeyValue)
        assert pair.key not in found, f"attribute {pair.key} twice"
        found[pair.key] = value_of(pair.value)
    return found


class Received:
    """What the receiver was sent, decoded."""

    def __init__(self) -> None:
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self.raw: list[bytes] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()

    def spans(self) -> list[Span]:
        return [span for _, span in self.spans_with_resource()]

    def spans_with_resource(self) -> Iterator[tuple[dict[str, Any], Span]]:
        with self.lock:
            requests = list(self.traces)
        for request in requests:
            for resource_spans in request.resource_spans:
                resource = attributes_of(resource_spans.resource.attributes)
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        yield resource, span

    def histogram_points(self, name: str) -> list[Any]:
        with self.lock:
            requests = list(self.metrics)
        return [
            point
            for request in requests
            for resource_metrics in request.resource_metrics
            for scope_metrics in resource_metrics.scope_metrics
            for metric in scope_metrics.metrics
            if metric.name == name
            for point in metric.histogram.data_points
        ]


class OtlpReceiver:
    """``with OtlpReceiver() as receiver:`` a receiver on 127.0.0.1 at ``receiver.endpoint``."""

    def __init__(self, answers: list[tuple[int, bytes]] | None = None) -> None:
        self.received = Received()
        self.answers = list(answers or [])
        received = self.received
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                kind = self.headers.get("Content-Type", "")
                status, answer = outer.next_answer()
                if status == 200:
                    try:
                        self._take(self.path, kind, body)
                    except Exception as exc:  # the test reads it from received.errors
                        received.errors.append(f"{self.path}: {exc!r}")
                        status, answer = 400, b""
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/x-protobuf")
                if not answer and status == 200:
                    answer = self._empty_answer(kind)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def _empty_answer(self, kind: str) -> bytes:
                if "json" in kind:
                    return b"{}"
                if self.path.endswith("/v1/metrics"):
                    return ExportMetricsServiceResponse().SerializeToString()
                return ExportTraceServiceResponse().SerializeToString()

            def _take(self, path: str, kind: str, body: bytes) -> None:
                is_json = "json" in kind
                if path.endswith("/v1/traces"):
                    message: Any = (
                        parse_json_traces(body)
                        if is_json
                        else ExportTraceServiceRequest.FromString(body)
                    )
                    target: list[Any] = received.traces
                elif path.endswith("/v1/metrics"):
                    message = (
                        parse_json_metrics(body)
                        if is_json
                        else ExportMetricsServiceRequest.FromString(body)
                    )
                    target = received.metrics
                else:
                    raise AssertionError(f"unexpected path {path}")
                with received.lock:
                    target.append(message)
                    received.headers.append(dict(self.headers.items()))
                    received.raw.append(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def next_answer(self) -> tuple[int, bytes]:
        with self.received.lock:
            return self.answers.pop(0) if self.answers else (200, b"")

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class BlackHole:
    """A collector that hangs: the connection is made (the kernel's backlog takes it) and the
    request sent, but nothing ever reads it or answers."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0), backlog=64)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> BlackHole:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def refused_endpoint() -> str:
    """A loopback port nothing listens on (bound, then let go)."""
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"
