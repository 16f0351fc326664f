"""The sessions table: a session's row, created, forked, found and read back on resume.

A session's row holds what its messages add up to (the counters ``seri.io.session.conversations``
keeps as it appends), its system prompt, its recap's place and what was learned of the
model's window: ``load_state`` gives a resuming chat all of it at once. Sessions are found by
an exact id or a prefix that names one, listed newest first (``seri.io.session.session_index``), and
a fork copies a session under a new id with everything that belongs to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw
import attrs

from seri.io.session.conversations import DamagedSession, live_rows
from seri.io.session.session_index import SESSION_COLUMNS, session_rows
from seri.io.session.store import Store
from seri.pure.inputs import json_text
from seri.pure.inputs.errors import SeriError
from seri.pure.session.records import Session

_SESSION_COLUMNS = SESSION_COLUMNS


@attrs.frozen
class SessionState:
    """What a running chat needs back from the session row on resume."""

    session: Session
    system_prompt: str
    prompt_hashes: dict[str, str]
    revision: int
    total_chars: int
    last_input_tokens: int
    turns_used: int
    max_turns: int | None
    recap: dict[str, Any] | None
    compacted_before: int
    # Provider tokens per ceil(chars/4), as learned from the provider's counts (0: never).
    token_scale: float = 0.0
    forked_from: str = ""
    # The window a provider's overflow answer stated for the session's model (0: none).
    learned_window: int = 0


def _session_from_row(row: Sequence[Any]) -> Session:
    return Session(
        id=row[0],
        project=row[1],
        created=row[2],
        updated=row[3],
        model=row[4],
        title=row[5],
        messages=row[6],
        parent_id=row[7] or "",
    )


def create_session(
    store: Store,
    *,
    session_id: str,
    project: str,
    now: float,
    model: str,
    system_prompt: str,
    prompt_hashes: dict[str, str],
    parent_id: str = "",
    project_identity: str = "",
) -> Session:
    with store.write() as conn:
        conn.execute(
            "INSERT INTO sessions(id, project, created, updated, model, system_prompt,"
            " prompt_hashes, parent_id, project_identity) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                session_id,
                project,
                now,
                now,
                model,
                system_prompt,
                json.dumps(prompt_hashes, sort_keys=True),
                parent_id or None,
                project_identity,
            ),
        )
        if parent_id:
            # A subagent's session carries the tags of the session it works for.
            from seri.io.session.session_tags import (
                copy_tags,  # (kept out of `seri sessions`' start)
            )

            copy_tags(conn, parent_id, session_id)
    return Session(session_id, project, now, now, model, "", 0, parent_id)


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """Rows as plain tuples of Any: apsw's stubs type each cell as a union."""
    return list(conn.execute(sql, params))


def project_identity(store: Store, session_id: str) -> str:
    rows = _rows(
        store.connection, "SELECT project_identity FROM sessions WHERE id = ?", (session_id,)
    )
    return str(rows[0][0]) if rows else ""


def current_revision(conn: apsw.Connection, session_id: str) -> int:
    rows = _rows(conn, "SELECT revision FROM sessions WHERE id = ?", (session_id,))
    if not rows:
        raise SeriError(f"no session {session_id}")
    return int(rows[0][0])


# The session row's columns a fork copies as they are (id, times and lineage are its own).
_FORKED_COLUMNS = (
    "project, model, title, system_prompt, prompt_hashes, next_seq, message_count,"
    " total_chars, last_input_tokens, turns_used, max_turns, recap, compacted_before,"
    " token_scale, project_identity, learned_window"
)


def fork_session(conn: apsw.Connection, source_id: str, fork_id: str, now: float) -> None:
    """Copy a session (its row, messages, file checkpoints, pins, tags and the allow rules its
    person said "always" to) under a new id, inside the caller's transaction; the copy
    records where it came from."""
    conn.execute(
        f"INSERT INTO sessions(id, created, updated, forked_from, {_FORKED_COLUMNS})"  # noqa: S608
        f" SELECT ?, ?, ?, id, {_FORKED_COLUMNS} FROM sessions WHERE id = ?",
        (fork_id, now, now, source_id),
    )
    conn.execute(
        "INSERT INTO messages(session_id, seq, role, kind, body, chars, created)"
        f" {live_rows('?2, seq, role, kind, body, chars, created')}",
        (source_id, fork_id),
    )
    conn.execute(
        "INSERT INTO checkpoints(session_id, user_seq, path, existed, content, sha256,"
        " after_sha256, at) SELECT ?, user_seq, path, existed, content, sha256, after_sha256,"
        " at FROM checkpoints WHERE session_id = ? ORDER BY id",
        (fork_id, source_id),
    )
    conn.execute(
        "INSERT INTO pins(session_id, text, at) SELECT ?, text, at FROM pins"
        " WHERE session_id = ? ORDER BY id",
        (fork_id, source_id),
    )
    conn.execute(
        "INSERT INTO session_rules(session_id, rule, tool, subject, at)"
        " SELECT ?, rule, tool, subject, at FROM session_rules WHERE session_id = ? ORDER BY id",
        (fork_id, source_id),
    )
    from seri.io.agent.goals import copy_goal
    from seri.io.session.session_tags import copy_tags

    copy_tags(conn, source_id, fork_id)
    copy_goal(conn, source_id, fork_id)


def discard_empty_session(store: Store, session_id: str) -> None:
    """Delete a session that holds no message (its runs, events and lease go with it)."""
    with store.write() as conn:
        conn.execute("DELETE FROM sessions WHERE id = ? AND message_count = 0", (session_id,))


def record_usage(store: Store, session_id: str, input_tokens: int) -> None:
    with store.write() as conn:
        conn.execute(
            "UPDATE sessions SET last_input_tokens = ? WHERE id = ?", (input_tokens, session_id)
        )


def set_turns(store: Store, session_id: str, turns_used: int) -> None:
    with store.write() as conn:
        conn.execute("UPDATE sessions SET turns_used = ? WHERE id = ?", (turns_used, session_id))


def set_max_turns(store: Store, session_id: str, max_turns: int) -> None:
    with store.write() as conn:
        conn.execute("UPDATE sessions SET max_turns = ? WHERE id = ?", (max_turns, session_id))


def load_state(store: Store, session_id: str) -> SessionState:
    rows = _rows(
        store.connection,
        f"SELECT {_SESSION_COLUMNS}, system_prompt, prompt_hashes, revision, total_chars,"  # noqa: S608 (a constant column list)
        " last_input_tokens, turns_used, max_turns, recap, compacted_before, token_scale,"
        " forked_from, learned_window"
        " FROM sessions WHERE id = ?",
        (session_id,),
    )
    if not rows:
        raise SeriError(f"no session {session_id}")
    row = rows[0]
    try:
        prompt_hashes = json_text.loads(row[9])
        recap = json_text.loads(row[15]) if row[15] else None
    except (ValueError, TypeError) as exc:
        raise DamagedSession(
            f"seri.db is damaged: the row of session {session_id} cannot be read ({exc}). "
            "Other sessions are not affected; keep a copy of seri.db and start a new session"
        ) from None
    return SessionState(
        session=_session_from_row(row),
        system_prompt=row[8],
        prompt_hashes=prompt_hashes if isinstance(prompt_hashes, dict) else {},
        revision=row[10],
        total_chars=row[11],
        last_input_tokens=row[12],
        turns_used=row[13],
        max_turns=row[14],
        recap=recap if isinstance(recap, dict) else None,
        compacted_before=row[16],
        token_scale=float(row[17] or 0.0),
        forked_from=row[18] or "",
        learned_window=int(row[19] or 0),
    )


def list_sessions(store: Store, project: str | None, *, limit: int | None = None) -> list[Session]:
    """Newest first; subagent sessions are listed under their parent, not here."""
    return [_session_from_row(row) for row in session_rows(store, project, limit=limit)]


def most_recent_session(store: Store, project: str) -> Session | None:
    sessions = list_sessions(store, project, limit=1)
    return sessions[0] if sessions else None


def get_session(store: Store, session_id: str) -> Session:
    rows = _rows(
        store.connection,
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?",  # noqa: S608 (constant columns)
        (session_id,),
    )
    if not rows:
        raise SeriError(f"no session {session_id}")
    return _session_from_row(rows[0])


def child_sessions(store: Store, parent_id: str) -> list[Session]:
    # S608: a constant column list; the id is bound.
    rows = store.connection.execute(
        f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE parent_id = ? ORDER BY created",  # noqa: S608
        (parent_id,),
    )
    return [_session_from_row(row) for row in rows]


def resolve_session_id(store: Store, text: str) -> str:
    """An exact id, or a prefix that names exactly one session."""
    if not text:
        raise SeriError("an empty session id names nothing; `seri sessions --all` lists them")
    exact = store.connection.execute("SELECT id FROM sessions WHERE id = ?", (text,)).fetchall()
    if exact:
        return str(exact[0][0])
    # GLOB is case-sensitive and uses the primary key index for a literal prefix.
    escaped = text.replace("[", "[[]").replace("*", "[*]").replace("?", "[?]")
    rows = store.connection.execute(
        "SELECT id FROM sessions WHERE id GLOB ? ORDER BY id LIMIT 11", (escaped + "*",)
    ).fetchall()
    if not rows:
        raise SeriError(f"no session matches '{text}'; `seri sessions --all` lists them")
    if len(rows) > 1:
        shown = ", ".join(str(r[0]) for r in rows[:10]) + (", …" if len(rows) > 10 else "")
        raise SeriError(f"'{text}' matches more than one session ({shown}); give more of the id")
    return str(rows[0][0])
