"""Ageing recordings out: finding what is older than the window, and deleting it for good.

The decision itself is pure (seri.pure.trajectories.retention); this module gathers its
facts (each session's last record, the older release's files and their
mtimes) and carries it out. Deleted rows are zeroed (secure_delete is on for
every connection) and the WAL, which still holds their old page images, is
truncated afterwards, so a pruned secret is gone from the files, not merely
unreachable.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import attrs

from seri.io.compaction.spill import SPILL_DIR
from seri.io.session.store import Store
from seri.io.session.store_connection import BUSY_TIMEOUT_MS
from seri.pure.trajectories.retention import (
    LegacyRecording,
    PrunePlan,
    RecordedSession,
    cutoff,
    expired_files,
    expired_sessions,
)

# Where the older release kept its recordings, one .jsonl file per session.
LEGACY_TRAJECTORY_DIR = "trajectories"
# A checkpoint waits for readers to move on; at session start, not for long.
CHECKPOINT_WAIT_MS = 2_000


@attrs.frozen
class PruneResult:
    plan: PrunePlan
    # Files that were due but could not be deleted, with why.
    failed: tuple[tuple[str, str], ...] = ()
    # False when a reader kept the WAL from being emptied after the delete.
    wal_cleared: bool = True
    # Sessions kept although old enough, because a record's time cannot be read (a text
    # where a number belongs): quarantined for a person to look at, never deleted blind.
    quarantined: tuple[str, ...] = ()


def _one_row(conn: apsw.Connection, sql: str, *params: object) -> Any:
    """The first row, as Any: apsw's stubs type each cell as a union."""
    bindings = params[0] if len(params) == 1 and isinstance(params[0], dict) else params
    return conn.execute(sql, bindings).fetchall()[0]


def _may_have_expired(conn: apsw.Connection, edge: float, current_session: str) -> bool:
    """One indexed lookup: if no other session's run is older than the edge, none expired."""
    rows = conn.execute(
        "SELECT 1 FROM runs WHERE session_id != ? AND last_at < ? ORDER BY last_at LIMIT 1",
        (current_session, edge),
    ).fetchall()
    return bool(rows)


# A stored time seri can compare: anything else (text from a damaged or foreign row) is not.
_UNREADABLE_TIMES = (
    "SELECT (SELECT count(*) FROM events WHERE session_id = :sid"
    "         AND typeof(at) NOT IN ('integer', 'real'))"
    "     + (SELECT count(*) FROM runs WHERE session_id = :sid"
    "         AND (typeof(started) NOT IN ('integer', 'real')"
    "              OR typeof(last_at) NOT IN ('integer', 'real')))"
)


def _recorded_sessions(
    conn: apsw.Connection, edge: float, current_session: str, quarantined: list[str]
) -> list[RecordedSession]:
    """Sessions whose recordings may be older than ``edge``, with their exact last record.

    ``runs.last_at`` picks the candidates (a run written by other means than
    the recorder may understate it, never overstate); the exact latest event
    time and run start are then read for those alone. The current session is
    left out here already: it is never due, and it may be long. A candidate
    with a record whose time is not a number cannot be judged: it is kept and
    its id added to ``quarantined``.
    """
    candidates = [
        str(sid)
        for (sid,) in conn.execute(
            "SELECT session_id FROM runs WHERE session_id != ?"
            " GROUP BY session_id HAVING max(last_at) < ?",
            (current_session, edge),
        )
    ]
    found = []
    for session_id in candidates:
        if _one_row(conn, _UNREADABLE_TIMES, {"sid": session_id})[0]:
            quarantined.append(session_id)
            continue
        runs, started = _one_row(
            conn, "SELECT count(*), max(started) FROM runs WHERE session_id = ?", session_id
        )
        events, latest = _one_row(
            conn, "SELECT count(*), max(at) FROM events WHERE session_id = ?", session_id
        )
        last = float(started) if latest is None else max(float(started), float(latest))
        found.append(RecordedSession(session_id, last, int(runs), int(events)))
    return found


def expired_recordings(
    conn: apsw.Connection,
    now: float,
    window_days: float,
    current_session: str,
    quarantined: list[str] | None = None,
) -> tuple[RecordedSession, ...]:
    edge = cutoff(now, window_days)
    if not _may_have_expired(conn, edge, current_session):
        return ()
    found = _recorded_sessions(
        conn, edge, current_session, [] if quarantined is None else quarantined
    )
    return expired_sessions(found, now, window_days, current_session)


def legacy_recordings(root: Path) -> list[LegacyRecording]:
    """The older release's ``trajectories/*.jsonl`` files (symlinks are not followed).

    Their events are not counted here: that means reading them, which only
    the files about to go deserve.
    """
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
    chosen = expired_files(legacy_recordings(root), now, window_days, current_session)
    return tuple(attrs.evolve(f, events=_count_lines(f.path)) for f in chosen)


def plan_prune(
    store: Store, root: Path, now: float, window_days: float, current_session: str
) -> PruneResult:
    """What a prune at ``now`` would delete (``--dry-run``), read in one short snapshot."""
    quarantined: list[str] = []
    with store.snapshot() as conn:
        sessions = expired_recordings(conn, now, window_days, current_session, quarantined)
    files = expired_legacy_files(root, now, window_days, current_session)
    return PruneResult(PrunePlan(sessions, files), quarantined=tuple(quarantined))


def prune(
    store: Store, root: Path, now: float, window_days: float, current_session: str
) -> PruneResult:
    """Delete the expired recordings in one IMMEDIATE transaction, then the old files.

    The decision is taken again inside the write lock, so a session another
    process recorded into a moment ago is seen as recent and kept. Deleted
    pages are zeroed (secure_delete) and the WAL, which still holds the old
    page images, is truncated afterwards, so the bytes are really gone.
    """
    conn = store.connection
    sessions: tuple[RecordedSession, ...] = ()
    quarantined: list[str] = []
    # Looked for without the write lock first: a session that began long ago
    # but is still in use makes old runs exist without anything being due. One read
    # snapshot: another pruner may delete a candidate's runs between two queries.
    with store.snapshot():
        due = expired_recordings(conn, now, window_days, current_session, quarantined)
    if due:
        quarantined.clear()
        with store.write():
            sessions = expired_recordings(conn, now, window_days, current_session, quarantined)
            _delete_sessions(conn, [s.session_id for s in sessions])
    wal_cleared = truncate_wal(conn) if sessions else True
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
    return PruneResult(
        PrunePlan(sessions, gone), tuple(failed), wal_cleared, tuple(sorted(set(quarantined)))
    )


def _delete_sessions(conn: apsw.Connection, session_ids: Sequence[str]) -> None:
    for session_id in session_ids:
        # Events first, by their session index: cheaper than the runs' cascade.
        conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
        conn.execute("DELETE FROM runs WHERE session_id = ?", (session_id,))


def truncate_wal(conn: apsw.Connection) -> bool:
    """Copy the zeroed pages home and empty the WAL; False if a reader kept it from finishing."""
    conn.set_busy_timeout(CHECKPOINT_WAIT_MS)
    try:
        busy, _, _ = _one_row(conn, "PRAGMA wal_checkpoint(TRUNCATE)")
    except apsw.BusyError:
        return False
    finally:
        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    return not busy


def age_out_spill(root: Path, now: float, days: float) -> int:
    """Delete full-output spill files of long commands older than the window, by mtime.

    They hold (redacted) tool output a session pointed the model at; like recordings,
    they age out rather than pile up. Links are never followed.
    """
    directory = root / SPILL_DIR
    cutoff = now - days * 86_400
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return 0
    for entry in entries:
        try:
            if (
                entry.is_file(follow_symlinks=False)
                and entry.stat(follow_symlinks=False).st_mtime < cutoff
            ):
                os.unlink(entry.path)
                removed += 1
        except FileNotFoundError:
            continue
    return removed
