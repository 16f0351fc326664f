"""Reading recordings out of seri.db (export, counts) and ageing them out (prune).

Export must never hold a long read transaction against a running chat: one
open reader keeps every checkpoint from finishing and the WAL grows without
bound. So it reads in chunks of a few hundred rows by ``id > last``, each chunk
one statement and so its own short transaction. Its upper bounds are fixed
when it starts, so what it writes is the store as it was at that moment (less
anything pruned meanwhile), not a mix of then and now.

Each line is built by SQLite itself: the stored body is already a JSON object,
so the line is the four keys export adds followed by the body minus its
opening brace. No row is parsed or re-serialised in Python, and a chunk comes
back as one UTF-8 blob, which is what keeps export within reach of
``sqlite3 -json``. For the same reason attrs and the retention rules are
imported only by the functions that prune: export starts without them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import apsw

from seri.io.store import BUSY_TIMEOUT_MS, Store

if TYPE_CHECKING:
    from seri.pure.retention import LegacyRecording, PrunePlan, RecordedSession

CHUNK_ROWS = 500
# Where the older release kept its recordings, one .jsonl file per session.
LEGACY_TRAJECTORY_DIR = "trajectories"
# A checkpoint waits for readers to move on; at session start, not for long.
CHECKPOINT_WAIT_MS = 2_000

_RUN_KEYS = """',"session":' || json_quote(session_id) || ',"run":' || json_quote(id) || ',"at":"'"""


def _line_sql(type_sql: str, keys: str, at: str, body: str) -> str:
    """SQL for one output line; ``keys`` is the run's ``,"session":…,"run":…,"at":"``.

    The recorder writes compact objects (``{"key":...``), spliced as they are.
    Anything else is normalised by SQLite's ``json()``, and a body that is not
    an object at all is carried as a string, so every line still parses.
    ``datetime(…, 'subsec')`` is used because it is twice as fast as strftime.
    """
    obj = f"json_valid({body}) AND json_type({body}) = 'object'"
    return (
        f"""'{{"type":' || {type_sql} || {keys}"""
        f" || coalesce(replace(datetime({at}, 'unixepoch', 'subsec'), ' ', 'T') || 'Z', '')"
        """ || '"'"""
        f" || CASE WHEN substr({body}, 1, 2) = '{{\"' AND json_valid({body})"
        f" THEN ',' || substr({body}, 2)"
        f" WHEN {body} = '{{}}' THEN '}}'"
        f" WHEN {obj} AND json({body}) = '{{}}' THEN '}}'"
        f" WHEN {obj} THEN ',' || substr(json({body}), 2)"
        f""" ELSE ',"body":' || json_quote({body}) || '}}' END"""
    )


_HEADER_LINE = _line_sql("""'"header"'""", _RUN_KEYS, "started", "header")
# Within one run the session and run never change: they come in as one parameter.
_EVENT_LINE = _line_sql("json_quote(type)", ":keys", "at", "body")


class ExportFilter(NamedTuple):
    session_id: str = ""
    since: float | None = None


class _Run(NamedTuple):
    rowid: int
    run_id: str
    started: float
    keys: str
    header: bytes


def export_chunks(store: Store, where: ExportFilter = ExportFilter()) -> Iterator[bytes]:
    """UTF-8 JSON Lines in chunks of whole lines: each run's header, then its events."""
    conn = store.connection
    with store.snapshot():
        row = conn.execute(
            "SELECT (SELECT coalesce(max(rowid), 0) FROM runs),"
            " (SELECT coalesce(max(id), 0) FROM events)"
        ).fetchall()[0]
    last_run_rowid, last_event_id = int(row[0]), int(row[1])
    after = 0
    while runs := _run_chunk(conn, after, last_run_rowid, where):
        for run in runs:
            yield from _run_lines(conn, run, last_event_id, where.since)
        after = runs[-1].rowid


def _run_chunk(conn: apsw.Connection, after: int, upto: int, where: ExportFilter) -> list[_Run]:
    sql = (
        f"SELECT rowid, id, started, {_RUN_KEYS}, CAST({_HEADER_LINE} || char(10) AS BLOB)"  # noqa: S608
        " FROM runs WHERE rowid > ? AND rowid <= ?"
    )
    params: list[object] = [after, upto]
    if where.session_id:
        sql += " AND session_id = ?"
        params.append(where.session_id)
    sql += f" ORDER BY rowid LIMIT {CHUNK_ROWS}"
    return [_Run(*row) for row in conn.execute(sql, params).fetchall()]


def _run_lines(conn: apsw.Connection, run: _Run, upto: int, since: float | None) -> Iterator[bytes]:
    """The header, then the events a chunk at a time. With --since, a run that
    started earlier keeps its header only if some of its events are recent enough.

    A chunk's lines are joined by group_concat over a subquery that is ordered
    and limited, so SQLite runs it as a co-routine and the lines come in id
    order (a test holds it to that).
    """
    recent = "" if since is None else " AND at >= :since"
    sql = (
        "SELECT max(id), CAST(group_concat(line, char(10)) || char(10) AS BLOB) FROM ("  # noqa: S608
        f"SELECT id, {_EVENT_LINE} AS line FROM events"
        f" WHERE run_id = :run AND id > :after AND id <= :upto{recent}"
        f" ORDER BY id LIMIT {CHUNK_ROWS})"
    )
    params: dict[str, object] = {"run": run.run_id, "upto": upto, "keys": run.keys, "after": 0}
    if since is not None:
        params["since"] = since
    header_due = since is None or run.started >= since
    if header_due:
        yield run.header
    while True:
        last, lines = conn.execute(sql, params).fetchall()[0]
        if last is None:
            return
        if not header_due:
            header_due = True
            yield run.header
        params["after"] = last
        yield lines


# -- counts ------------------------------------------------------------------------------------


class RecordingCounts(NamedTuple):
    sessions: int
    runs: int
    events: int


def recording_counts(store: Store) -> RecordingCounts:
    with store.snapshot() as conn:
        row = conn.execute(
            "SELECT (SELECT count(DISTINCT session_id) FROM runs), (SELECT count(*) FROM runs),"
            " (SELECT count(*) FROM events)"
        ).fetchall()[0]
    return RecordingCounts(int(row[0]), int(row[1]), int(row[2]))


# -- ageing out --------------------------------------------------------------------------------


class PruneResult(NamedTuple):
    plan: PrunePlan
    # Files that were due but could not be deleted, with why.
    failed: tuple[tuple[str, str], ...] = ()
    # False when a reader kept the WAL from being emptied after the delete.
    wal_cleared: bool = True


def _may_have_expired(conn: apsw.Connection, edge: float) -> bool:
    """One indexed lookup: no run older than the edge means no session can have expired."""
    oldest = conn.execute("SELECT min(last_at) FROM runs").fetchall()[0][0]
    return oldest is not None and float(oldest) < edge


def _recorded_sessions(conn: apsw.Connection, edge: float) -> list[RecordedSession]:
    """Sessions whose recordings may be older than ``edge``, with their exact last record.

    ``runs.last_at`` picks the candidates (a run written by other means than
    the recorder may understate it, never overstate); the exact latest event
    time and run start are then read for those alone.
    """
    from seri.pure.retention import RecordedSession

    candidates = [
        str(sid)
        for (sid,) in conn.execute(
            "SELECT session_id FROM runs GROUP BY session_id HAVING max(last_at) < ?", (edge,)
        )
    ]
    found = []
    for session_id in candidates:
        runs, started = conn.execute(
            "SELECT count(*), max(started) FROM runs WHERE session_id = ?", (session_id,)
        ).fetchall()[0]
        events, latest = conn.execute(
            "SELECT count(*), max(at) FROM events WHERE session_id = ?", (session_id,)
        ).fetchall()[0]
        last = float(started) if latest is None else max(float(started), float(latest))
        found.append(RecordedSession(session_id, last, int(runs), int(events)))
    return found


def expired_recordings(
    conn: apsw.Connection, now: float, window_days: float, current_session: str
) -> tuple[RecordedSession, ...]:
    from seri.pure.retention import cutoff, expired_sessions

    edge = cutoff(now, window_days)
    if not _may_have_expired(conn, edge):
        return ()
    return expired_sessions(_recorded_sessions(conn, edge), now, window_days, current_session)


def legacy_recordings(root: Path) -> list[LegacyRecording]:
    """The older release's ``trajectories/*.jsonl`` files (symlinks are not followed).

    Their events are not counted here: that means reading them, which only
    the files about to go deserve.
    """
    from seri.pure.retention import LegacyRecording

    directory = root / LEGACY_TRAJECTORY_DIR
    try:
        with os.scandir(directory) as listing:
            entries = [e for e in listing if e.name.endswith(".jsonl")]
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = []
    for entry in entries:
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            mtime = entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        found.append(LegacyRecording(entry.path, entry.name.removesuffix(".jsonl"), mtime, 0))
    return found


def _count_lines(path: str) -> int:
    lines, last = 0, b"\n"
    try:
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                lines += block.count(b"\n")
                last = block[-1:]
    except OSError:
        return 0
    return lines + (0 if last == b"\n" else 1)


def expired_legacy_files(
    root: Path, now: float, window_days: float, current_session: str
) -> tuple[LegacyRecording, ...]:
    import attrs

    from seri.pure.retention import expired_files

    chosen = expired_files(legacy_recordings(root), now, window_days, current_session)
    return tuple(attrs.evolve(f, events=_count_lines(f.path)) for f in chosen)


def plan_prune(
    store: Store, root: Path, now: float, window_days: float, current_session: str
) -> PrunePlan:
    """What a prune at ``now`` would delete (``--dry-run``), read in one short snapshot."""
    from seri.pure.retention import PrunePlan

    with store.snapshot() as conn:
        sessions = expired_recordings(conn, now, window_days, current_session)
    return PrunePlan(sessions, expired_legacy_files(root, now, window_days, current_session))


def prune(
    store: Store, root: Path, now: float, window_days: float, current_session: str
) -> PruneResult:
    """Delete the expired recordings in one IMMEDIATE transaction, then the old files.

    The decision is taken again inside the write lock, so a session another
    process recorded into a moment ago is seen as recent and kept. Deleted
    pages are zeroed (secure_delete) and the WAL, which still holds the old
    page images, is truncated afterwards, so the bytes are really gone.
    """
    from seri.pure.retention import PrunePlan, cutoff

    conn = store.connection
    sessions: tuple[RecordedSession, ...] = ()
    if _may_have_expired(conn, cutoff(now, window_days)):
        with store.write():
            sessions = expired_recordings(conn, now, window_days, current_session)
            _delete_sessions(conn, [s.session_id for s in sessions])
    wal_cleared = _truncate_wal(conn) if sessions else True
    files = expired_legacy_files(root, now, window_days, current_session)
    failed = []
    for legacy in files:
        try:
            os.unlink(legacy.path)
        except FileNotFoundError:
            continue  # another seri got there first: gone all the same
        except OSError as exc:
            failed.append((legacy.path, exc.strerror or str(exc)))
    kept = {path for path, _ in failed}
    gone = tuple(f for f in files if f.path not in kept)
    return PruneResult(PrunePlan(sessions, gone), tuple(failed), wal_cleared)


def _delete_sessions(conn: apsw.Connection, session_ids: Sequence[str]) -> None:
    for session_id in session_ids:
        # Events first, by their session index: cheaper than the runs' cascade.
        conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM runs WHERE session_id = ?", (session_id,))


def _truncate_wal(conn: apsw.Connection) -> bool:
    """Copy the zeroed pages home and empty the WAL; False if a reader kept it from finishing."""
    conn.set_busy_timeout(CHECKPOINT_WAIT_MS)
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0][0]
    except apsw.BusyError:
        return False
    finally:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    return not busy
