"""Evidence for issue 18's choice of no OpenTelemetry SDK: how long the official SDK's
exporter holds a process up when the collector hangs or refuses connections.

    .venv/bin/python -m scripts.bench.otlp_sdk_exit

Runs itself under the SDK's own venv (.cache/bench/otel-sdk, made by scripts.bench.otlp:
opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http 1.45.2). One span, with ids and
times set by hand (a ReadableSpan: what seri's recordings would have to become), is handed
to ``OTLPSpanExporter.export`` and to the SDK's usual pipeline (``BatchSpanProcessor``, shut
down as at a process's exit), against a loopback collector that accepts connections and
never answers, and against a port nothing listens on. Prints a Markdown table.
"""

from __future__ import annotations

import logging
import socket
import subprocess
import sys
import time
from pathlib import Path


def _measure() -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.trace import SpanContext, SpanKind, TraceFlags

    logged: list[str] = []

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    logging.getLogger("opentelemetry").addHandler(Count())
    span = ReadableSpan(
        name="chat m",
        context=SpanContext(0x1234, 0x99, is_remote=False, trace_flags=TraceFlags(1)),
        resource=Resource.create({"service.name": "seri"}),
        attributes={"gen_ai.operation.name": "chat"},
        kind=SpanKind.CLIENT,
        start_time=1_700_000_000_000_000_000,
        end_time=1_700_000_001_000_000_000,
    )
    hole = socket.create_server(("127.0.0.1", 0), backlog=64)
    with socket.create_server(("127.0.0.1", 0)) as probe:
        refused = probe.getsockname()[1]
    print(
        "| collector | `export()`, default timeout | `BatchSpanProcessor.shutdown()` | log lines |"
    )
    print("| --- | --- | --- | --- |")
    for name, port in (("hangs", hole.getsockname()[1]), ("refuses", refused)):
        endpoint = f"http://127.0.0.1:{port}/v1/traces"
        logged.clear()
        started = time.perf_counter()
        OTLPSpanExporter(endpoint=endpoint).export([span])
        exported = time.perf_counter() - started
        processor = BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint))
        processor.on_end(span)
        started = time.perf_counter()
        processor.shutdown()
        shut = time.perf_counter() - started
        print(f"| {name} | {exported:.1f} s | {shut:.1f} s | {len(logged)} |")
    hole.close()


def main() -> None:
    sdk_python = Path(__file__).resolve().parents[2] / ".cache" / "bench" / "otel-sdk" / "bin"
    if sys.argv[1:] == ["--measure"]:
        _measure()
        return
    if not (sdk_python / "python").exists():
        raise SystemExit("make bench-otlp first: it installs the SDK into .cache/bench/otel-sdk")
    subprocess.run([str(sdk_python / "python"), __file__, "--measure"], check=True)


if __name__ == "__main__":
    main()
