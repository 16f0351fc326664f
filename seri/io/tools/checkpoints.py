"""File checkpoints: the content a file had before seri's write_file or edit changed it.

Grouped under the user message that led to the change (its seq), so /rewind can
put back every file a turn changed. Only the 20 most recently touched sessions
of a project keep their checkpoints; older sessions keep their conversations.
"""

from __future__ import annotations

import hashlib
from typing import Any

import attrs

from seri.io.session.conversations import live_rows
from seri.io.session.store import Store

SESSIONS_KEPT_PER_PROJECT = 20
# ``after_sha256`` of a file seri left absent (a rewind deleted it); '' means not known.
ABSENT = "absent"


@attrs.frozen
class Checkpoint:
    user_seq: int
    path: str
    existed: bool
    content: bytes | None
    sha256: str


def _latest_user_seq(conn: Any, session_id: str) -> int:
    rows = conn.execute(
        live_rows("max(seq)", " AND role = 'user' AND kind = ''"),
        (session_id,),
    ).fetchall()
    return int(rows[0][0] or 0)


def written_digest(data: bytes | None) -> str:
    """What ``after_sha256`` holds: the content's sha256, or ABSENT for no file at all."""
    return hashlib.sha256(data).hexdigest() if data is not None else ABSENT


def store_checkpoint(
    store: Store, session_id: str, project: str, path: str, prior: bytes | None, now: float
) -> int | None:
    """Keep ``prior`` for ``path`` unless this turn already has the file's earlier state.

    Returns the new checkpoint's id, or None when the turn already had one for the path.
    """
    with store.write() as conn:
        user_seq = _latest_user_seq(conn, session_id)
        seen = conn.execute(
            "SELECT 1 FROM checkpoints WHERE session_id = ? AND user_seq = ? AND path = ?",
            (session_id, user_seq, path),
        ).fetchall()
        if seen:
            return None  # the first checkpoint of a turn holds the state before the turn
        digest = hashlib.sha256(prior).hexdigest() if prior is not None else ""
        conn.execute(
            "INSERT INTO checkpoints(session_id, user_seq, path, existed, content, sha256, at)"
            " VALUES (?,?,?,?,?,?,?)",
            (session_id, user_seq, path, prior is not None, prior, digest, now),
        )
        checkpoint_id = int(conn.last_insert_rowid())
        _retire_old_sessions(conn, project)
        return checkpoint_id


def discard_checkpoint(store: Store, checkpoint_id: int) -> None:
    """Drop a checkpoint taken for a write that then changed nothing (the tool failed)."""
    with store.write() as conn:
        conn.execute("DELETE FROM checkpoints WHERE id = ?", (checkpoint_id,))


def _retire_old_sessions(conn: Any, project: str) -> None:
    conn.execute(
        "DELETE FROM checkpoints WHERE session_id IN ("
        " SELECT c.session_id FROM checkpoints c JOIN sessions s ON s.id = c.session_id"
        " WHERE s.project = ? GROUP BY c.session_id ORDER BY max(c.at) DESC"
        " LIMIT -1 OFFSET ?)",
        (project, SESSIONS_KEPT_PER_PROJECT),
    )


def checkpoints_since(store: Store, session_id: str, user_seq: int) -> list[Checkpoint]:
    """Checkpoints of turns from ``user_seq`` on, oldest first (the earliest state wins)."""
    rows = store.connection.execute(
        "SELECT user_seq, path, existed, content, sha256 FROM checkpoints"
        " WHERE session_id = ? AND user_seq >= ? ORDER BY user_seq, id",
        (session_id, user_seq),
    )
    return [
        Checkpoint(seq, path, bool(existed), content, digest)
        for seq, path, existed, content, digest in rows
    ]


def files_by_turn(store: Store, session_id: str) -> dict[int, list[str]]:
    result: dict[int, list[str]] = {}
    rows = store.connection.execute(
        "SELECT user_seq, path FROM checkpoints WHERE session_id = ? ORDER BY id", (session_id,)
    )
    for seq, path in rows:
        paths = result.setdefault(seq, [])
        if path not in paths:
            paths.append(path)
    return result


def has_checkpoints(store: Store, session_id: str) -> bool:
    rows = store.connection.execute(
        "SELECT 1 FROM checkpoints WHERE session_id = ? LIMIT 1", (session_id,)
    ).fetchall()
    return bool(rows)


def note_written(store: Store, session_id: str, path: str, data: bytes | None) -> None:
    """Remember what seri left in ``path`` so /rewind can tell later changes by others."""
    with store.write() as conn:
        note_written_in(conn, session_id, path, data)


def note_written_in(conn: Any, session_id: str, path: str, data: bytes | None) -> None:
    conn.execute(
        "UPDATE checkpoints SET after_sha256 = ? WHERE id = ("
        " SELECT id FROM checkpoints WHERE session_id = ? AND path = ?"
        " ORDER BY id DESC LIMIT 1)",
        (written_digest(data), session_id, path),
    )


def last_written_hash(store: Store, session_id: str, path: str) -> str:
    rows = store.connection.execute(
        "SELECT after_sha256 FROM checkpoints WHERE session_id = ? AND path = ?"
        " ORDER BY id DESC LIMIT 1",
        (session_id, path),
    ).fetchall()
    return str(rows[0][0]) if rows else ""


def forget_from(conn: Any, session_id: str, user_seq: int) -> None:
    """Drop the checkpoints of the turns from ``user_seq`` on (their messages are gone).

    What seri last left in each of their files moves to the file's latest remaining
    checkpoint, so a later rewind does not take seri's own writes for someone else's.
    """
    rows = conn.execute(
        "SELECT path, after_sha256 FROM checkpoints WHERE session_id = ? AND user_seq >= ?"
        " ORDER BY id",
        (session_id, user_seq),
    ).fetchall()
    last_after = {str(path): str(after) for path, after in rows if after}
    conn.execute(
        "DELETE FROM checkpoints WHERE session_id = ? AND user_seq >= ?", (session_id, user_seq)
    )
    for path, after in last_after.items():
        conn.execute(
            "UPDATE checkpoints SET after_sha256 = ? WHERE id = ("
            " SELECT id FROM checkpoints WHERE session_id = ? AND path = ?"
            " ORDER BY id DESC LIMIT 1)",
            (after, session_id, path),
        )
