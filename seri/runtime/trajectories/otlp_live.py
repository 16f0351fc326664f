"""Live OTLP export: the trajectory records of a run, as they are recorded, become spans and
metrics sent to the collector the OpenTelemetry variables (or config.json) name. ``seri chat``
gets it as an event observer (``OtlpObserver``, made by ``seri.runtime.trajectories.telemetry``).

The interface the recording side calls (see ``LiveExport``):

    export = live_export(os.environ, config, redactor, warn)   # None when export is off
    export.start(session_id, run_id, header, at)               # with the run's header
    export.record(type_, data, at)                             # each event, as recorded
    export.close()                                             # at the end of the run

The records are the ones ``seri trajectory export`` prints, fed in the order they are
recorded, so a run exported live and the same run exported later from the store give the
same spans with the same ids. ``record`` maps on the caller's thread (a few tens of
microseconds) and hands finished spans to a background sender; nothing here waits for the
network, and nothing here raises: telemetry never fails a run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from seri import __version__
from seri.io.trajectories.otlp_sender import CLOSE_SECONDS, BackgroundSender
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import Header
from seri.pure.trajectories.genai_attributes import CONTENT_LIMIT, Content
from seri.pure.trajectories.genai_scopes import TraceOutput, TraceState, TrajectoryRecord
from seri.pure.trajectories.genai_trace import trace_end, trace_step
from seri.pure.trajectories.otlp_model import Producer
from seri.pure.trajectories.otlp_settings import OtlpConfigError, OtlpSettings, otlp_settings
from seri.pure.trajectories.redaction import Redactor

SCOPE_NAME = "seri"


def producer_of(settings: OtlpSettings) -> Producer:
    return Producer(settings.resource, SCOPE_NAME, __version__)


def content_of(settings: OtlpSettings, redactor: Redactor, limit: int = CONTENT_LIMIT) -> Content:
    """The content opt-in, with the export's own secrets (header values) redacted too."""
    secrets = (*redactor.secrets, *settings.secrets())
    return Content(settings.capture_content, Redactor.of(secrets), limit)


class LiveExport:
    """One process's live export. Feed it each record as it is recorded, then close it."""

    def __init__(
        self,
        settings: OtlpSettings,
        redactor: Redactor,
        warn: Callable[[str], None],
        *,
        content_limit: int = CONTENT_LIMIT,
        sender: BackgroundSender | None = None,
    ) -> None:
        content = content_of(settings, redactor, content_limit)
        self._state = TraceState(content)
        self._sender = sender or BackgroundSender(
            settings, producer_of(settings), content.redactor, warn
        )
        self._session = ""
        self._run = ""
        self._ordinal = 0

    def start(self, session_id: str, run_id: str, header: Mapping[str, Any], at: float) -> None:
        """A run begins (its header): the previous run, if any, ends here."""
        self._session, self._run, self._ordinal = session_id, run_id, 0
        self._take(TrajectoryRecord("header", session_id, run_id, at, header, 0))

    def record(self, type_: str, data: Mapping[str, Any], at: float) -> None:
        """One event of the current run, as the recorder got it."""
        self._ordinal += 1
        self._take(TrajectoryRecord(type_, self._session, self._run, at, data, self._ordinal))

    def end_run(self) -> None:
        """The run ended: whatever is still open ends now and goes to the sender (which goes
        on, for a next run of the same process, until ``close``)."""
        self._state, output = trace_end(self._state)
        self._hand_over(output)

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """End whatever is still open and send the rest, waiting ``timeout`` s at most."""
        self.end_run()
        self._sender.close(timeout)

    @property
    def dropped(self) -> int:
        return self._sender.dropped

    def _take(self, record: TrajectoryRecord) -> None:
        self._state, output = trace_step(self._state, record)
        self._hand_over(output)

    def _hand_over(self, output: TraceOutput) -> None:
        if output.spans or output.observations:
            self._sender.add(output.spans, output.observations)


def live_export(
    env: Mapping[str, str],
    config: Any,
    redactor: Redactor,
    warn: Callable[[str], None],
) -> LiveExport | None:
    """The live export the environment and ``config`` (config.json's ``telemetry.otlp``)
    ask for; None when they ask for none, or (with a warning) when they cannot be used."""
    try:
        settings = otlp_settings(env, config, __version__)
    except OtlpConfigError as exc:
        warn(f"telemetry is off: {exc}")
        return None
    if settings is None:
        return None
    for line in settings.warnings:
        warn(line)
    return LiveExport(settings, redactor, warn)


class OtlpObserver:
    """The live export as an event observer (``seri.runtime.agent.ports.EventObserver``): each run's
    header and events, as the recorder gets them, become spans on the export's thread.

    The header names the session and the run (``header.session``, ``header.run``), so the
    spans' ids are the ones a later ``seri trajectory export --format otlp`` of the stored
    run gives. Nothing here waits for the network; ``close`` (at the process's end) waits
    for the last batch a bounded time.
    """

    def __init__(self, export: LiveExport) -> None:
        self.export = export

    def started(self, header: Header, at: float) -> None:
        self.export.start(header.session, header.run, header.export(), at)

    def observe(self, event: Event, at: float) -> None:
        self.export.record(event.type, event.export(), at)

    def finished(self, at: float) -> None:
        self.export.end_run()

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        self.export.close(timeout)
