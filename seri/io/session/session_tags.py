"""A session's run tags in the store (see ``seri.pure.session.run_tags``): what its runs were
tagged with, one value per key, the latest run's winning."""

from __future__ import annotations

from typing import TYPE_CHECKING

import apsw

from seri.io.session.store import Store

if TYPE_CHECKING:
    from seri.pure.session.run_tags import RunTags


def tag_session(conn: apsw.Connection, session_id: str, tags: RunTags) -> None:
    """Add this run's tags to the session's, inside the caller's transaction."""
    conn.executemany(
        "INSERT INTO session_tags(session_id, key, value) VALUES (?,?,?)"
        " ON CONFLICT(session_id, key) DO UPDATE SET value = excluded.value",
        [(session_id, key, value) for key, value in tags],
    )


def copy_tags(conn: apsw.Connection, source_id: str, target_id: str) -> None:
    """A fork (or a subagent's session) starts with its source's tags."""
    conn.execute(
        "INSERT INTO session_tags(session_id, key, value)"
        " SELECT ?, key, value FROM session_tags WHERE session_id = ?",
        (target_id, source_id),
    )


def session_tags(store: Store, session_id: str) -> dict[str, str]:
    rows = store.connection.execute(
        "SELECT key, value FROM session_tags WHERE session_id = ? ORDER BY key", (session_id,)
    )
    return {str(key): str(value) for key, value in rows}
