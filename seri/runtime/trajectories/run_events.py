"""Where one run's events go: the trajectory recorder, and whoever watches the run live.

Every event of a run (the loop's, compaction's, the tool host's, the model caller's, the chat
session's) passes through ``RunEvents.record`` once: it is stamped with its time, handed to
the recorder (which keeps it only while recording is on) and to each observer (which see it
whether or not recording is on). The header opens the run for both, ``finish`` closes it for
the observers.

Observers get the events with secrets redacted, as the recorder stores them, but not elided:
what each does with a long text is its own choice. An observer that raises is told on stderr
once and dropped, so a broken observer costs a warning, never the run.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from seri.pure.terminal.terminal_text import neutralise
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import Header

if TYPE_CHECKING:
    import apsw

    from seri.io.trajectories.recorder import Recorder
    from seri.runtime.agent.ports import EventObserver


def warn_on_stderr(line: str) -> None:
    print(neutralise(line), file=sys.stderr)


class RunEvents:
    """One run's events, to the recorder and to the observers."""

    def __init__(
        self,
        recorder: Recorder,
        observers: Sequence[EventObserver] = (),
        *,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] = warn_on_stderr,
    ) -> None:
        self.recorder = recorder
        self._observers = list(observers)
        self._clock = clock
        self._warn = warn
        # Between the header and the end: what observers are told belongs to this run.
        self._open = False

    @property
    def run_id(self) -> str:
        return self.recorder.run_id

    @property
    def session_id(self) -> str:
        return self.recorder.session_id

    def start(self, header: Header) -> None:
        """The run begins: its header, recorded (when recording is on) and told to observers."""
        at = self._clock()
        self.recorder.start(header, at)
        self._open = True
        if self._observers:
            shown = header.redacted(self.recorder.redactor.text)
            self._tell(lambda observer: observer.started(shown, at))

    def record(self, event: Event) -> None:
        at = self._clock()
        self.recorder.record(event, at)
        if self._open and self._observers:
            shown = event.redacted(self.recorder.redactor.text)
            self._tell(lambda observer: observer.observe(shown, at))

    def set_recording(self, on: bool, header: Callable[[], Header]) -> None:
        """``/trajectory on|off`` for the rest of the run: a recording turned on again starts
        with a new header line; the observers, who saw the run all along, are not told."""
        recorder = self.recorder
        if not on and recorder.started:
            recorder.flush()
            recorder.started = False
        elif on and not recorder.started:
            recorder.enabled = True
            recorder.start(header(), self._clock())

    def finish(self) -> None:
        """The run ends (the process, or ``/clear``): observers are told once."""
        if not self._open:
            return
        self._open = False
        at = self._clock()
        self._tell(lambda observer: observer.finished(at))

    def flush(self) -> None:
        self.recorder.flush()

    def flush_into(self, conn: apsw.Connection) -> None:
        """Write the buffered events inside the caller's transaction."""
        self.recorder.flush_into(conn)

    def _tell(self, message: Callable[[EventObserver], None]) -> None:
        for observer in tuple(self._observers):
            try:
                message(observer)
            except Exception as exc:  # noqa: BLE001 - an observer never fails the run
                self._observers.remove(observer)
                self._warn(
                    f"seri: warning: event observer {type(observer).__name__} failed "
                    f"({type(exc).__name__}: {exc}); the run goes on without it"
                )
