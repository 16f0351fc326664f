"""``seri trajectory export --format otlp``: stored runs as OpenTelemetry traces and metrics.

With an endpoint named (``OTEL_EXPORTER_OTLP_ENDPOINT`` and the rest, or config.json's
``telemetry.otlp``) the traces and metrics are posted there, in batches, with the spans'
original times; a receiver that asks to wait (429, 503) is waited for, a few times. With
none, they are written to stdout as OTLP JSON Lines (the OpenTelemetry file format: one
ExportTraceServiceRequest a line, then one ExportMetricsServiceRequest), which a collector's
``otlpjsonfile`` receiver or a ``curl`` later can send on.

Span ids are derived from the recordings, so sending the same runs again sends the same
spans (trace stores keep one of each); metric points are counted again.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator

from seri import __version__
from seri.io.inputs.config import read_config
from seri.io.session.profile_files import profile_root
from seri.io.session.store import Store
from seri.io.trajectories.trajectory_reader import stored_records
from seri.pure.inputs.errors import EXIT_UNFINISHED, SeriError
from seri.pure.trajectories.genai_metrics import MetricKey, MetricSum, accumulate, histograms_of
from seri.pure.trajectories.genai_trace import FinishedTrace, finished_traces
from seri.pure.trajectories.otlp_model import Histogram, Producer, Span, nanos
from seri.pure.trajectories.otlp_request import metrics_body, traces_body
from seri.pure.trajectories.otlp_settings import (
    OtlpConfigError,
    OtlpSettings,
    Target,
    otlp_settings,
)
from seri.pure.trajectories.redaction import Redactor, secrets_from_environment
from seri.runtime.trajectories.otlp_live import content_of, producer_of

BATCH_SPANS = 512
ATTEMPTS = 3
MAX_WAIT_SECONDS = 10.0


class ExportNotSent(SeriError):
    """The collector could not be reached or refused the export: it is incomplete."""

    exit_code = EXIT_UNFINISHED


def export_otlp(
    store: Store,
    session_id: str,
    since: float | None,
    write: Callable[[Iterable[bytes]], None],
) -> int:
    settings = _settings()
    content = content_of(settings, Redactor.of(secrets_from_environment(os.environ)))
    records = stored_records(store, session_id, since)
    since_ns = None if since is None else nanos(since)
    traces = finished_traces(records, content, since_ns)
    producer = producer_of(settings)
    if settings.traces is None and settings.metrics is None:
        write(_file_lines(producer, traces))
        return 0
    _Sending(settings, producer, content.redactor).send(traces)
    return 0


def _settings() -> OtlpSettings:
    config = read_config(profile_root()).get("telemetry")
    section = config.get("otlp") if isinstance(config, dict) else None
    try:
        settings = otlp_settings(os.environ, section, __version__, require_endpoint=False)
    except OtlpConfigError as exc:
        raise SeriError(str(exc)) from None
    assert settings is not None
    for line in settings.warnings:
        print(f"seri: {line}", file=sys.stderr)
    return settings


def _batches(traces: Iterable[FinishedTrace]) -> Iterator[list[FinishedTrace]]:
    """Whole traces, about BATCH_SPANS spans a batch."""
    batch: list[FinishedTrace] = []
    size = 0
    for trace in traces:
        batch.append(trace)
        size += len(trace.spans)
        if size >= BATCH_SPANS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


class _Metrics:
    """The metric observations of everything exported, as one point per attribute set over
    the whole export's time: delta points of one series must not overlap."""

    def __init__(self) -> None:
        self.sums: dict[MetricKey, MetricSum] = {}
        self.start = 0
        self.end = 0

    def add(self, traces: Iterable[FinishedTrace]) -> None:
        for trace in traces:
            self.sums = accumulate(self.sums, trace.observations)
            root = trace.root
            self.start = min(self.start or root.start_ns, root.start_ns)
            self.end = max(self.end, root.end_ns)

    def histograms(self) -> tuple[Histogram, ...]:
        return histograms_of(self.sums, self.start, self.end)


def _file_lines(producer: Producer, traces: Iterable[FinishedTrace]) -> Iterator[bytes]:
    metrics = _Metrics()
    for batch in _batches(traces):
        metrics.add(batch)
        yield traces_body("http/json", producer, _spans(batch)) + b"\n"
    found = metrics.histograms()
    if found:
        yield metrics_body("http/json", producer, found) + b"\n"


def _spans(batch: Iterable[FinishedTrace]) -> list[Span]:
    return [span for trace in batch for span in trace.spans]


class _Sending:
    def __init__(self, settings: OtlpSettings, producer: Producer, redactor: Redactor) -> None:
        from seri.io.trajectories.otlp_sender import OtlpPoster

        self.settings = settings
        self.producer = producer
        self.posters = {
            target.url: OtlpPoster(target, redactor)
            for target in (settings.traces, settings.metrics)
            if target is not None
        }
        self.traces = 0
        self.spans = 0
        self.refused: list[str] = []

    def send(self, traces: Iterable[FinishedTrace]) -> None:
        metrics = _Metrics()
        try:
            for batch in _batches(traces):
                metrics.add(batch)
                target = self.settings.traces
                if target is not None:
                    spans = _spans(batch)
                    self._post(target, traces_body(target.protocol, self.producer, spans))
                    self.spans += len(spans)
                self.traces += len(batch)
            points = self._send_metrics(metrics.histograms())
        finally:
            for poster in self.posters.values():
                poster.close()
        self._report(points)

    def _send_metrics(self, found: tuple[Histogram, ...]) -> int:
        target = self.settings.metrics
        if target is None or not found:
            return 0
        self._post(target, metrics_body(target.protocol, self.producer, found))
        return sum(len(metric.points) for metric in found)

    def _post(self, target: Target, body: bytes) -> None:
        poster = self.posters[target.url]
        for attempt in range(1, ATTEMPTS + 1):
            delivery = poster.post(body)
            if delivery.ok:
                if delivery.refused:
                    self.refused.append(
                        f"{target.shown} refused {delivery.refused}: {delivery.refused_why}"
                    )
                return
            if not delivery.retry or attempt == ATTEMPTS:
                break
            time.sleep(min(delivery.retry_after or 0.5 * 2 ** (attempt - 1), MAX_WAIT_SECONDS))
        sent = (
            f"{_count(self.traces, 'trace')} went before it" if self.traces else "nothing was sent"
        )
        raise ExportNotSent(
            f"cannot send to {target.shown} ({target.source}): {delivery.why}; {sent}. "
            "Sending the same runs again is safe: their spans keep their ids"
        )

    def _report(self, points: int) -> None:
        for line in self.refused:
            print(f"seri: {line}", file=sys.stderr)
        if not self.traces:
            print("seri: nothing to send: no task is recorded in what was asked", file=sys.stderr)
            return
        where = [self.settings.traces, self.settings.metrics]
        shown = " and ".join(dict.fromkeys(target.shown for target in where if target))
        what = [f"{_count(self.traces, 'trace')} ({_count(self.spans, 'span')})"]
        if self.settings.traces is None:
            what = [f"the metrics of {_count(self.traces, 'trace')}"]
        if self.settings.metrics is not None:
            what.append(_count(points, "metric point"))
        print(f"seri: sent {' and '.join(what)} to {shown}", file=sys.stderr)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' * (number != 1)}"
