"""What a headless run (``seri chat -p``) tells a script: its events and its result record.

Two observers of the run's events: ``RunTally`` adds up the usage of every model call (the
tasks', the summarizer's, the subagents'; recorded or not), which is both the result
record's usage and the figure a cost budget is held to; ``EventStream`` writes each event
to stdout as one JSON line, in the shape ``seri trajectory export`` writes it (the same
keys, redacted and elided alike), for ``--output-format stream-json``.

The stream is written by a thread of its own, so a reader that is slow (or gone) never
holds the run up; ``close`` waits for what was queued, then the result line goes last.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

from seri.io.trajectories.recorder import EVENT_ELIDE_BYTES, LINE_KEYS
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import Header, ModelCall, SummaryCall
from seri.pure.trajectories.json_lines import json_line
from seri.pure.trajectories.redaction import elide_large

if TYPE_CHECKING:
    from seri.pure.agent.task_records import TaskEnd

# The events whose ``usage`` is one model call's.
CALL_EVENTS = frozenset({ModelCall.type, SummaryCall.type})


class RunTally:
    """Every model call of the run, added up (also the run's ``SpendingPort``)."""

    def __init__(self) -> None:
        self._totals = UsageTotals()
        self._lock = threading.Lock()

    def started(self, header: Header, at: float) -> None:
        return

    def observe(self, event: Event, at: float) -> None:
        if event.type in CALL_EVENTS:
            call = UsageTotals.of_record(event.export().get("usage"))
            with self._lock:
                self._totals = self._totals.plus(call)

    def finished(self, at: float) -> None:
        return

    def totals(self) -> UsageTotals:
        with self._lock:
            return self._totals


class JsonLines:
    """JSON Lines on a stream, written by their own thread; errors (a reader gone) end the
    writing quietly, never the run."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._write, name="seri-stream", daemon=True)
        self._thread.start()

    def put(self, value: Mapping[str, Any]) -> None:
        self._lines.put(json_line(value, default=str))

    def close(self, timeout: float = 10.0) -> None:
        """Write what was queued (waiting at most ``timeout`` s for a stuck reader)."""
        self._lines.put(None)
        self._thread.join(timeout)

    def _write(self) -> None:
        broken = False
        while (line := self._lines.get()) is not None:
            if broken:
                continue
            try:
                self.out.write(line)
                self.out.flush()
            except (OSError, ValueError):
                broken = True


class EventStream:
    """``--output-format stream-json``: each event of the run as a line on stdout, as
    ``seri trajectory export`` writes it (the observers are given events redacted; strings
    over the recorder's limit are elided here as the recorder elides them)."""

    def __init__(self, lines: JsonLines, elide_bytes: int = EVENT_ELIDE_BYTES) -> None:
        self.lines = lines
        self.elide_bytes = elide_bytes
        self.session = ""
        self.run = ""

    def started(self, header: Header, at: float) -> None:
        self.session, self.run = header.session, header.run
        self._line(header, at)

    def observe(self, event: Event, at: float) -> None:
        self._line(event, at)

    def finished(self, at: float) -> None:
        return

    def _line(self, event: Event, at: float) -> None:
        fields = {
            (f"data_{key}" if key in LINE_KEYS else key): value
            for key, value in event.export().items()
        }
        from seri.pure.terminal.timestamps import (
            iso_utc,  # datetime: only a stream-json run pays for it
        )

        lead = {"type": event.type, "session": self.session, "run": self.run, "at": iso_utc(at)}
        self.lines.put({**lead, **elide_large(fields, self.elide_bytes)})


def unfinished_line(end: TaskEnd, redact: Callable[[str], str]) -> str:
    """Why a task did not finish, in one line for a person (its detail redacted)."""
    if end.status == "refused":
        return neutralise(f"seri: {redact(end.detail)}")
    return neutralise(f"seri: task not finished ({end.status}): {redact(end.detail)}")
