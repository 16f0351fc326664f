"""Deleting sessions for good, and renaming them.

A session goes with everything that hangs on it: its subagent sessions, messages (and so
their search index, by trigger), compaction ledger, checkpoints, pins and recordings, in
one IMMEDIATE transaction, which also takes each session's lease: a session a live chat
holds is refused, nothing is deleted. secure_delete zeroes the freed pages, FTS5's secure-delete
removes the words from the search index, and the WAL, which still holds the old page
images, is truncated afterwards (as when recordings age out).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import apsw

from seri.io.session.leases import SessionBusy, take_in, this_process
from seri.io.session.store import Store
from seri.io.trajectories.trajectory_prune import truncate_wal


class Doomed(NamedTuple):
    """A session about to be deleted, as the confirmation shows it."""

    session_id: str
    title: str
    messages: int
    subagents: int
    runs: int


def _with_subagents(conn: apsw.Connection, session_ids: Sequence[str]) -> list[str]:
    """The sessions and, depth first, every subagent session under them."""
    found: list[str] = []
    pending = list(session_ids)
    while pending:
        current = pending.pop()
        if current in found:
            continue
        found.append(current)
        rows: list[Any] = conn.execute(
            "SELECT id FROM sessions WHERE parent_id = ?", (current,)
        ).fetchall()
        pending.extend(str(row[0]) for row in rows)
    return found


def describe(store: Store, session_ids: Sequence[str]) -> list[Doomed]:
    with store.snapshot() as conn:
        result = []
        for session_id in session_ids:
            family = _with_subagents(conn, [session_id])
            row: Any = conn.execute(
                "SELECT title, message_count,"
                " (SELECT count(*) FROM runs WHERE session_id = sessions.id)"
                " FROM sessions WHERE id = ?",
                (session_id,),
            ).fetchall()[0]
            result.append(Doomed(session_id, row[0], row[1], len(family) - 1, row[2]))
        return result


def delete_sessions(store: Store, session_ids: Sequence[str]) -> tuple[int, bool]:
    """Delete the sessions and their subagents; (sessions deleted, whether the WAL was
    emptied: False when a reader kept it from finishing, the pages are zeroed all the same)."""
    conn = store.connection
    me = this_process("seri sessions rm")
    with store.write():
        for session_id in session_ids:
            # A live chat's session is refused (SessionBusy names the holder); a lease left
            # by a process that is gone is simply taken, and goes with the session.
            try:
                take_in(conn, session_id, me)
            except SessionBusy as exc:
                holder = str(exc).split(";", 1)[0]
                raise SessionBusy(
                    f"{holder}; nothing was deleted: end that seri first, then delete"
                ) from None
        family = _with_subagents(conn, session_ids)
        for session_id in family:
            # Events by their session index first: cheaper than the runs' cascade.
            conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM runs WHERE session_id = ?", (session_id,))
            # Messages (with their search index), the ledger, checkpoints, pins, leases and usage go
            # by cascade; subagents are deleted before their parent's row, in this order.
        for session_id in reversed(family):
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    return len(family), truncate_wal(conn)


def rename_session(store: Store, session_id: str, title: str) -> None:
    """Only the title changes: the conversation's revision stays, so a chat that is running
    on the session goes on undisturbed."""
    with store.write() as conn:
        conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
