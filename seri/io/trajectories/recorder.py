"""Recording a run into the store's ``runs`` and ``events`` tables.

Events are buffered and written inside the next conversation transaction (or
at the end of the run), so recording costs no extra fsync per event. Every
value passes the redactor, and strings over the elision limit are stored as
``{"elided": true, "originalBytes": N}``.

``seri trajectory export`` splices each stored body into its output line after
the keys ``type``, ``session``, ``run`` and ``at``, without parsing it; so a
body never uses those keys itself (one that would is renamed ``data_<key>``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import apsw

from seri.io.session.ids import random_id
from seri.io.session.store import Store
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import Header
from seri.pure.trajectories.redaction import Redactor, elide_large

# Strings longer than this (in UTF-8 bytes) are elided from recordings.
EVENT_ELIDE_BYTES = 2048
# The keys export puts in front of every body (see the module docstring).
LINE_KEYS = frozenset({"type", "session", "run", "at"})


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _body(value: Mapping[str, Any]) -> dict[str, Any]:
    """Keys that export writes itself are renamed, so that no line has a key twice."""
    return {(f"data_{key}" if key in LINE_KEYS else key): item for key, item in value.items()}


class Recorder:
    """One run's recording. Disabled recorders accept events and drop them."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        redactor: Redactor,
        *,
        enabled: bool,
        elide_bytes: int = EVENT_ELIDE_BYTES,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.redactor = redactor
        self.enabled = enabled
        self.elide_bytes = elide_bytes
        self.run_id = random_id()
        self.started = False
        self._started_at = 0.0
        self._header = ""
        self._pending: list[tuple[str, str, float, str, str]] = []
        self._run_unwritten = False

    def start(self, header: Header, now: float) -> None:
        if not self.enabled:
            return
        body = _body(header.export())
        self._header = _dumps(elide_large(self.redactor.value(body), self.elide_bytes))
        self._started_at = now
        # The run's row goes in with the next write (the task's first message, or the end of
        # the run): a transaction of its own would cost an fsync before the first request.
        self._run_unwritten = True
        self.started = True

    def _upsert_run(self, conn: apsw.Connection, last_at: float) -> None:
        """Insert the run, or move its ``last_at`` on.

        Inserting again (rather than only updating) matters when another
        process aged this run out while we sat idle past the window: the
        events that follow must still find their run, or the conversation
        write they share a transaction with would fail.
        """
        conn.execute(
            "INSERT INTO runs(id, session_id, started, header, last_at) VALUES (?,?,?,?,?)"
            " ON CONFLICT(id) DO UPDATE SET last_at = max(last_at, excluded.last_at)",
            (self.run_id, self.session_id, self._started_at, self._header, last_at),
        )

    def record(self, event: Event, at: float | None = None) -> None:
        if not self.started:
            return
        value = elide_large(self.redactor.value(_body(event.export())), self.elide_bytes)
        stamp = time.time() if at is None else at
        self._pending.append((self.run_id, self.session_id, stamp, event.type, _dumps(value)))

    def flush_into(self, conn: apsw.Connection) -> None:
        """Write buffered events (and the run's row, when not yet written) inside the
        caller's transaction."""
        if self._run_unwritten and self.started:
            self._upsert_run(conn, self._started_at)
            self._run_unwritten = False
        if self._pending:
            self._upsert_run(conn, max(event[2] for event in self._pending))
            conn.executemany(
                "INSERT INTO events(run_id, session_id, at, type, body) VALUES (?,?,?,?,?)",
                self._pending,
            )
            self._pending.clear()

    def flush(self) -> None:
        if self._pending or (self._run_unwritten and self.started):
            with self.store.write() as conn:
                self.flush_into(conn)
