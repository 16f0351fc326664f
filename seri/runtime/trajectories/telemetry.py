"""Whether this run exports OpenTelemetry live, decided without importing the exporter.

Live export is on when an endpoint is named: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the
traces' or metrics' own variable) or config.json's ``telemetry.otlp``. With none of them,
``seri chat`` imports nothing of the export and starts as it did before it existed (the
lazy-import test holds it to that). With one, the exporter is built (a setting it cannot
use is said once and the run goes on without it), handed to the run as an event
observer, and closed when the process ends, waiting a bounded time for the last batch.
"""

from __future__ import annotations

import atexit
from collections.abc import Mapping
from typing import TYPE_CHECKING

from seri.runtime.trajectories.run_events import warn_on_stderr

if TYPE_CHECKING:
    from seri.pure.inputs.settings import Settings
    from seri.pure.trajectories.redaction import Redactor
    from seri.runtime.trajectories.otlp_live import OtlpObserver

# The variables that name where spans or metrics go; any one of them asks for export.
ENDPOINT_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)


def export_asked(env: Mapping[str, str], settings: Settings) -> bool:
    """Whether anything asks for live export (its settings may still turn it off)."""
    return settings.telemetry_otlp is not None or any(
        env.get(name, "").strip() for name in ENDPOINT_VARIABLES
    )


def live_observers(
    env: Mapping[str, str], settings: Settings, redactor: Redactor
) -> tuple[OtlpObserver, ...]:
    """The live export as a run's observer, or nothing when export is off."""
    if not export_asked(env, settings):
        return ()
    from seri.runtime.trajectories.otlp_live import OtlpObserver, live_export

    export = live_export(
        env, settings.telemetry_otlp, redactor, lambda line: warn_on_stderr(f"seri: {line}")
    )
    if export is None:
        return ()
    observer = OtlpObserver(export)
    # However the process ends (the task's end, Ctrl-D, an error), the last batch goes out,
    # waiting at most the sender's bounded time.
    atexit.register(observer.close)
    return (observer,)
