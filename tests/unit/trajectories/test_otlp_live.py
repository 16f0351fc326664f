"""The live export's interface (issue 18): records fed one by one as a run records them,
spans sent from a background thread, and a collector that is down, silent or failing never
holding the run up and said once.

The recording side does not call it yet (that wiring comes with the runtime's events as
data); these tests drive ``LiveExport`` with a real run's stored records, in order.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from seri.io.session.store import open_store
from seri.io.trajectories.trajectory_reader import stored_records
from seri.pure.trajectories.genai_scopes import TrajectoryRecord
from seri.pure.trajectories.otlp_settings import OtlpSettings, otlp_settings
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.trajectories.otlp_live import LiveExport, live_export
from tests.conftest import RunSeri
from tests.e2e.test_otlp_export import _run_task
from tests.otlp_receiver import OtlpReceiver


def _settings(endpoint: str, **env: str) -> OtlpSettings:
    settings = otlp_settings({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, **env}, None, "0.1.0")
    assert settings is not None
    return settings


def _recorded(home: Path) -> list[TrajectoryRecord]:
    store = open_store(home, readonly=True)
    try:
        return list(stored_records(store))
    finally:
        store.connection.close()


def _feed(export: LiveExport, records: list[TrajectoryRecord]) -> list[float]:
    """Feed the records as the recorder would; the time each call took on this thread."""
    took = []
    for record in records:
        started = time.perf_counter()
        if record.type == "header":
            export.start(record.session, record.run, record.data, record.at)
        else:
            export.record(record.type, record.data, record.at)
        took.append(time.perf_counter() - started)
    return took


@pytest.fixture
def recorded(run_seri: RunSeri, seri_home: Path) -> list[TrajectoryRecord]:
    _run_task(run_seri)
    return _recorded(seri_home)


def test_a_run_fed_live_sends_what_the_export_sends(
    recorded: list[TrajectoryRecord], run_seri: RunSeri
) -> None:
    warnings: list[str] = []
    with OtlpReceiver() as live_receiver:
        export = LiveExport(_settings(live_receiver.endpoint), Redactor(), warnings.append)
        _feed(export, recorded)
        export.close()
    with OtlpReceiver() as later:
        result = run_seri(
            "trajectory",
            "export",
            "--format",
            "otlp",
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": later.endpoint},
        )
    assert result.returncode == 0, result.stderr
    assert warnings == []
    assert not live_receiver.received.errors
    live = sorted(live_receiver.received.spans(), key=lambda s: s.span_id)
    assert len(live) == 11
    assert live == sorted(later.received.spans(), key=lambda s: s.span_id)
    assert live_receiver.received.histogram_points("gen_ai.client.token.usage")


def test_export_is_off_unless_asked_and_bad_settings_only_warn() -> None:
    warnings: list[str] = []
    assert live_export({}, None, Redactor(), warnings.append) is None
    assert (
        live_export(
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            None,
            Redactor(),
            warnings.append,
        )
        is None
    )
    assert len(warnings) == 1 and warnings[0].startswith(
        "telemetry is off: OTEL_EXPORTER_OTLP_PROTOCOL"
    )


@pytest.fixture
def refused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A collector that takes the connection and then never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


def _many(recorded: list[TrajectoryRecord], times: int) -> list[TrajectoryRecord]:
    """The run again and again, as new runs (so every span is new)."""
    out = []
    for n in range(times):
        out += [
            TrajectoryRecord(r.type, r.session, f"{r.run}-{n}", r.at, r.data, r.ordinal)
            for r in recorded
        ]
    return out


@pytest.mark.parametrize("kind", ["refused", "silent", "failing"])
def test_a_collector_that_is_down_never_holds_the_run_up_and_is_said_once(
    kind: str, recorded: list[TrajectoryRecord], refused_port: int, silent_port: int
) -> None:
    warnings: list[str] = []
    records = _many(recorded, 40)
    with OtlpReceiver(answers=[(500, b"boom")] * 1000) as failing:
        endpoint = {
            "refused": f"http://127.0.0.1:{refused_port}",
            "silent": f"http://127.0.0.1:{silent_port}",
            "failing": failing.endpoint,
        }[kind]
        settings = _settings(endpoint, OTEL_EXPORTER_OTLP_HEADERS="x-api-key=s3cr3t-value-123")
        export = LiveExport(settings, Redactor(), warnings.append)
        took = _feed(export, records)
        started = time.monotonic()
        export.close(timeout=1.0)
        closing = time.monotonic() - started
    assert max(took) < 0.25, max(took)
    assert closing < 1.5
    assert len(warnings) == 1, warnings
    assert "s3cr3t" not in warnings[0]
    assert export.dropped > 0


def test_a_full_queue_drops_spans_with_one_warning(
    recorded: list[TrajectoryRecord], silent_port: int
) -> None:
    from seri.io.trajectories.otlp_sender import BackgroundSender
    from seri.runtime.trajectories.otlp_live import content_of, producer_of

    warnings: list[str] = []
    settings = _settings(f"http://127.0.0.1:{silent_port}")
    content = content_of(settings, Redactor())
    sender = BackgroundSender(
        settings, producer_of(settings), content.redactor, warnings.append, max_spans=20
    )
    export = LiveExport(settings, Redactor(), warnings.append, sender=sender)
    _feed(export, _many(recorded, 10))
    export.close(timeout=0.2)
    assert len(warnings) == 1
    assert export.dropped >= 10 * 11 - 20


def test_records_fed_live_with_content_are_redacted(recorded: list[TrajectoryRecord]) -> None:
    secret = "x-api-key-value-0042"
    records = [*recorded]
    tool = next(i for i, r in enumerate(records) if r.type == "tool_call")
    data: dict[str, Any] = {**records[tool].data, "arguments": f'{{"path": "{secret}"}}'}
    records[tool] = TrajectoryRecord(
        "tool_call",
        records[tool].session,
        records[tool].run,
        records[tool].at,
        data,
        records[tool].ordinal,
    )
    with OtlpReceiver() as receiver:
        settings = _settings(
            receiver.endpoint,
            OTEL_EXPORTER_OTLP_HEADERS=f"x-api-key={secret}",
            OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true",
        )
        export = LiveExport(settings, Redactor(), print)
        _feed(export, records)
        export.close()
    assert all(secret.encode() not in raw for raw in receiver.received.raw)
    assert any(b"[REDACTED]" in raw for raw in receiver.received.raw)
