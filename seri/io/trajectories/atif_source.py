"""What `seri trajectory export --format atif` reads: a session's runs, events and messages.

A run's messages are the session's messages stored from the run's start until the next
recorded run of the session started (runs of one session do not overlap: one writer per
session). Messages from before the first recorded run belong to no run. Each run is read
in its own short read transaction, so a running chat is never held up for long.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from seri.io.session.conversations import decode_message, live_rows
from seri.io.session.store import Store
from seri.pure.trajectories.atif_recordings import (
    RecordedEvent,
    RunRecording,
    SessionMessages,
    StoredMessage,
    UnrecordedMessages,
    subagents_started,
)

_FOREVER = float("inf")


def export_sessions(store: Store, session_id: str, since: float | None) -> list[str]:
    """The sessions to export: the one asked for, or every top-level one, oldest first."""
    if session_id:
        return [session_id]
    sql = "SELECT id FROM sessions WHERE parent_id IS NULL"
    params: tuple[Any, ...] = ()
    if since is not None:
        sql += " AND updated >= ?"
        params = (since,)
    rows: list[Any] = store.connection.execute(sql + " ORDER BY created, id", params).fetchall()
    return [str(row[0]) for row in rows]


def _messages(store: Store, session_id: str, start: float, end: float) -> tuple[StoredMessage, ...]:
    rows: list[Any] = store.connection.execute(
        live_rows("seq, created, body", " AND created >= ? AND created < ? ORDER BY seq"),
        (session_id, start, end),
    ).fetchall()
    # A row that cannot be read is reported as damage, naming it, as every reader does.
    return tuple(
        StoredMessage(seq, at, decode_message(session_id, seq, body)) for seq, at, body in rows
    )


def _subagents(store: Store, child_ids: tuple[str, ...]) -> tuple[SessionMessages, ...]:
    return tuple(
        SessionMessages(child, _messages(store, child, -_FOREVER, _FOREVER)) for child in child_ids
    )


def session_parts(
    store: Store, session_id: str, since: float | None
) -> Iterator[RunRecording | UnrecordedMessages]:
    """The session's documents in order: its unrecorded messages (if any), then each run."""
    conn = store.connection
    with store.snapshot():
        runs: list[Any] = conn.execute(
            "SELECT id, started, header, last_at FROM runs WHERE session_id = ?"
            " ORDER BY started, rowid",
            (session_id,),
        ).fetchall()
        meta: Any = conn.execute(
            "SELECT model, project, source_key IS NOT NULL FROM sessions WHERE id = ?",
            (session_id,),
        ).fetchall()[0]
    starts = [float(run[1]) for run in runs]
    first = starts[0] if starts else _FOREVER
    ids = [str(run[0]) for run in runs]
    with store.snapshot():
        early = _messages(store, session_id, -_FOREVER, first)
        unrecorded = None
        if early and (since is None or early[-1].created >= since):
            children: list[Any] = conn.execute(
                "SELECT id FROM sessions WHERE parent_id = ? AND created < ? ORDER BY created",
                (session_id, first),
            ).fetchall()
            unrecorded = UnrecordedMessages(
                session_id,
                model=str(meta[0]),
                project=str(meta[1]),
                imported=bool(meta[2]),
                messages=early,
                subagents=_subagents(store, tuple(str(c[0]) for c in children)),
                continued_by=ids[0] if ids else "",
            )
    if unrecorded is not None:
        yield unrecorded
    for index, (run_id, started, header, last_at) in enumerate(runs):
        if since is not None and float(last_at) < since:
            continue
        end = starts[index + 1] if index + 1 < len(starts) else _FOREVER
        # Read whole before it is handed on: no read transaction is held while it is written.
        with store.snapshot():
            events = tuple(
                RecordedEvent(str(kind), float(at), str(body))
                for kind, at, body in conn.execute(
                    "SELECT type, at, body FROM events WHERE run_id = ? ORDER BY id", (run_id,)
                )
            )
            recording = RunRecording(
                session_id,
                str(run_id),
                float(started),
                str(header),
                events,
                _messages(store, session_id, float(started), end),
                _subagents(store, subagents_started(events)),
                continued_by=ids[index + 1] if index + 1 < len(ids) else "",
            )
        yield recording
