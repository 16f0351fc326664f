"""Stored recordings read back as records (header, then events, each with its position in
its run), for the exports that map them rather than print them: OTLP.

Like the JSON Lines export it reads a few hundred rows per statement, each statement its
own short read transaction, up to the ids that existed when it started, so a running chat
is never held up. Runs come whole: ``since`` picks the runs with any record at or after
it (``runs.last_at``), and leaves the finer choice to the caller, so that a task is never
cut in two.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from seri.io.session.store import Store
from seri.pure.inputs import json_text
from seri.pure.trajectories.genai_scopes import TrajectoryRecord

CHUNK_ROWS = 500


def _body(text: Any) -> dict[str, Any]:
    """A stored body as its fields; one that is not a JSON object is carried as ``body``."""
    try:
        value = json_text.loads_stored(text)
    except (TypeError, ValueError):
        return {"body": text}
    return value if isinstance(value, dict) else {"body": value}


def stored_records(
    store: Store, session_id: str = "", since: float | None = None
) -> Iterator[TrajectoryRecord]:
    conn = store.connection
    with store.snapshot():
        row: Any = conn.execute(
            "SELECT (SELECT coalesce(max(rowid), 0) FROM runs),"
            " (SELECT coalesce(max(id), 0) FROM events)"
        ).fetchall()[0]
    last_run, last_event = int(row[0]), int(row[1])
    sql = "SELECT rowid, id, session_id, started, header FROM runs WHERE rowid > ? AND rowid <= ?"
    params: list[object] = [0, last_run]
    if session_id:
        sql += " AND session_id = ?"
        params.append(session_id)
    if since is not None:
        sql += " AND last_at >= ?"
        params.append(since)
    sql += " ORDER BY rowid LIMIT ?"
    params.append(CHUNK_ROWS)
    while True:
        runs: list[Any] = conn.execute(sql, params).fetchall()
        if not runs:
            return
        for _, run_id, session, started, header in runs:
            yield TrajectoryRecord("header", session, run_id, float(started), _body(header), 0)
            yield from _events(store, run_id, session, last_event)
        params[0] = runs[-1][0]


def _events(store: Store, run_id: str, session: str, upto: int) -> Iterator[TrajectoryRecord]:
    after, ordinal = 0, 0
    while True:
        rows: list[Any] = store.connection.execute(
            "SELECT id, type, at, body FROM events WHERE run_id = ? AND id > ? AND id <= ?"
            " ORDER BY id LIMIT ?",
            (run_id, after, upto, CHUNK_ROWS),
        ).fetchall()
        if not rows:
            return
        for event_id, type_, at, body in rows:
            ordinal += 1
            after = event_id
            yield TrajectoryRecord(str(type_), session, run_id, float(at), _body(body), ordinal)
