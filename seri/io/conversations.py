"""Sessions and their messages in the store.

Appending is an INSERT at ``next_seq`` plus an UPDATE of the session row's
counters: the cost is the same at message 10 and message 100,000, because
nothing is rewritten and the running totals live on the session row.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apsw
import attrs

from seri.io.session_index import SESSION_COLUMNS, session_rows
from seri.io.store import Store
from seri.pure import json_text
from seri.pure.errors import SeriError, SessionChanged
from seri.pure.lone_surrogates import replace_lone_surrogates
from seri.pure.records import Message, Session
from seri.pure.session_titles import title_from_prompt
from seri.pure.tokens import message_chars

_SESSION_COLUMNS = SESSION_COLUMNS

# A row of the live conversation: the session's messages from its wall up (the latest recap's
# seq, ``sessions.compacted_before``). Below the wall lie what compactions evicted and the
# purge (``seri.io.eviction_purge``) has not deleted yet: every reader of a session's messages
# filters with this, the session's id bound as ?1 (a plain ? after it is ?2, and so on).
LIVE = "session_id = ?1 AND seq >= (SELECT compacted_before FROM sessions WHERE id = ?1)"


def live_rows(columns: str, more: str = "") -> str:
    """The query of ``columns`` of a session's live messages, then ``more`` (conditions after
    AND, ORDER BY, LIMIT): the session's id is bound as ?1, the placeholders in ``more`` next."""
    return f"SELECT {columns} FROM messages WHERE {LIVE}{more}"  # noqa: S608 (constants only)


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
            from seri.io.session_tags import copy_tags  # (kept out of `seri sessions`' start)

            copy_tags(conn, parent_id, session_id)
    return Session(session_id, project, now, now, model, "", 0, parent_id)


def _rows(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """Rows as plain tuples of Any: apsw's stubs type each cell as a union."""
    return list(conn.execute(sql, params))


def insert_messages(
    conn: apsw.Connection,
    session_id: str,
    messages: Iterable[Message],
    now: float,
    *,
    revision: int,
) -> int:
    """Append inside the caller's transaction; returns the seq of the last one.

    ``revision`` is the session's revision as the caller last saw it. It is compared in
    this same (IMMEDIATE) transaction: if anyone wrote to the session since, nothing is
    appended and SessionChanged says so, so that no two writers can ever interleave their
    messages (a call of one between the call and the result of the other).
    """
    from seri.io.codec import message_to_json  # cattrs loads only when messages move

    row = _rows(conn, "SELECT next_seq, title, revision FROM sessions WHERE id = ?", (session_id,))
    if not row:
        raise SeriError(f"session {session_id} no longer exists")
    seq: int = row[0][0]
    title: str = row[0][1]
    if row[0][2] != revision:
        raise SessionChanged(
            f"session {session_id} was changed by another process while this one was "
            "working on it; nothing more was stored. Resume it again to go on from what "
            "is stored"
        )
    count = chars = 0
    for message in messages:
        size = message_chars(message)
        conn.execute(
            "INSERT INTO messages(session_id, seq, role, kind, body, chars, created)"
            " VALUES (?,?,?,?,?,?,?)",
            (session_id, seq, message.role, message.kind, message_to_json(message), size, now),
        )
        if not title and message.role == "user" and not message.kind:
            title = replace_lone_surrogates(title_from_prompt(message.text))
        seq += 1
        count += 1
        chars += size
    conn.execute(
        "UPDATE sessions SET next_seq = ?, message_count = message_count + ?,"
        " total_chars = total_chars + ?, updated = ?, title = ?, revision = revision + 1"
        " WHERE id = ?",
        (seq, count, chars, now, title, session_id),
    )
    return int(seq) - 1


def append_messages(
    store: Store, session_id: str, messages: Sequence[Message], now: float, *, revision: int
) -> int:
    with store.write() as conn:
        return insert_messages(conn, session_id, messages, now, revision=revision)


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
    from seri.io.session_tags import copy_tags

    copy_tags(conn, source_id, fork_id)


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


# For the person to run, in the message about a damaged row.
_DELETE_ROW = (
    "sqlite3 seri.db \"DELETE FROM messages WHERE session_id = '{session_id}' AND seq = {seq}\""
)


class DamagedSession(SeriError):
    """A stored row that cannot be read: named, with what to do; other sessions are fine."""


def decode_message(session_id: str, seq: int, body: object) -> Message:
    from seri.io.codec import message_from_json

    try:
        return message_from_json(body if isinstance(body, str) else repr(body))
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        fix = _DELETE_ROW.format(session_id=session_id, seq=seq)
        raise DamagedSession(
            f"seri.db is damaged: message {seq} of session {session_id} cannot be read "
            f"({type(exc).__name__}: {str(exc)[:120]}). Other sessions are not affected. Keep a "
            f"copy of seri.db, then delete that row ({fix}) or start a new session"
        ) from None


def load_messages(store: Store, session_id: str) -> tuple[Message, ...]:
    rows = store.connection.execute(live_rows("seq, body", " ORDER BY seq"), (session_id,))
    return tuple(decode_message(session_id, seq, body) for seq, body in rows)


def iter_message_rows(store: Store, session_id: str) -> Iterator[tuple[int, float, Message]]:
    """(seq, created, message) in order, for display and export."""
    rows = store.connection.execute(live_rows("seq, created, body", " ORDER BY seq"), (session_id,))
    for seq, created, body in rows:
        yield seq, created, decode_message(session_id, seq, body)


def iter_message_bodies(store: Store, session_id: str) -> Iterator[tuple[int, str]]:
    """(seq, stored JSON body) in order, for output that needs no records."""
    yield from store.connection.execute(live_rows("seq, body", " ORDER BY seq"), (session_id,))


def message_body(store: Store, session_id: str, seq: int) -> object:
    """One message's stored body as it is (its JSON text, unless the row is damaged)."""
    rows = store.connection.execute(
        "SELECT body FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchall()
    return rows[0][0]


# One `seri sessions show --json` line per message, built by SQLite: the keys show adds,
# then the stored body (always an object written by message_to_json) minus its brace.
_MESSAGE_LINE = (
    """'{"type":"message","session":' || json_quote(session_id) || ',"seq":' || seq"""
    """ || ',"created":"' || replace(datetime(created, 'unixepoch', 'subsec'), ' ', 'T')"""
    """ || 'Z"' || CASE WHEN substr(body, 1, 2) = '{"' THEN ',' || substr(body, 2)"""
    """ ELSE ',"body":' || json_quote(body) || '}' END"""
)
LINE_CHUNK = 1000


def message_line_chunks(store: Store, session_id: str) -> Iterator[str]:
    """The session's messages as JSON Lines, in order, a thousand lines a chunk."""
    # S608: a constant line expression and limit; the values are bound.
    sql = (
        "SELECT max(seq), group_concat(line, char(10)) || char(10), min(damaged) FROM ("  # noqa: S608
        f"SELECT seq, {_MESSAGE_LINE} AS line,"
        " CASE WHEN json_valid(body) AND substr(body, 1, 2) = '{\"' THEN NULL ELSE seq END"
        " AS damaged FROM messages"
        f" WHERE {LIVE} AND seq > ? ORDER BY seq LIMIT {LINE_CHUNK})"
    )
    after = 0
    while True:
        last, lines, damaged = store.connection.execute(sql, (session_id, after)).fetchall()[0]
        if last is None:
            return
        if damaged is not None:
            # Named like every other reader of a damaged row names it (DamagedSession).
            message_dict(session_id, int(damaged), message_body(store, session_id, int(damaged)))
        after = int(last)
        yield str(lines)


def message_dict(session_id: str, seq: int, body: object) -> dict[str, Any]:
    """A stored body as plain JSON (for output that needs no record); a body that is not a
    message's JSON object is reported as damage, as ``decode_message`` reports it."""
    try:
        data = json_text.loads_stored(body) if isinstance(body, str) else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        decode_message(session_id, seq, body)  # raises DamagedSession, naming the row
        raise DamagedSession(f"seri.db is damaged: message {seq} of session {session_id}")
    return data


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


def compaction_ledger(store: Store, session_id: str) -> list[dict[str, Any]]:
    rows = store.connection.execute(
        "SELECT at, trigger, focus, evicted, estimate_before, estimate_after, summary_calls,"
        " elided FROM compactions WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    return [
        {
            "at": at,
            "trigger": trigger,
            "focus": focus,
            "evicted": evicted,
            "estimate_before": before,
            "estimate_after": after,
            "summary_calls": calls,
            "elided": elided,
        }
        for at, trigger, focus, evicted, before, after, calls, elided in rows
    ]


def typed_messages_after(
    store: Store, session_id: str, after_seq: int
) -> list[tuple[int, Message]]:
    """The messages a person typed (user messages of no kind) after ``after_seq``, oldest
    first, with their seq."""
    rows = store.connection.execute(
        "SELECT seq, body FROM messages WHERE session_id = ? AND role = 'user' AND kind = ''"
        " AND seq > ? ORDER BY seq",
        (session_id, after_seq),
    )
    return [(seq, decode_message(session_id, seq, body)) for seq, body in rows]


def tool_results_from(store: Store, session_id: str, seq: int) -> Iterator[Message]:
    """The tool results stored from ``seq`` on, in order."""
    rows = store.connection.execute(
        "SELECT seq, body FROM messages WHERE session_id = ? AND role = 'tool' AND seq >= ?",
        (session_id, seq),
    )
    for number, body in rows:
        yield decode_message(session_id, number, body)


def truncate_in(conn: apsw.Connection, session_id: str, seq: int) -> int:
    """Drop the messages from ``seq`` on inside the caller's transaction, with the session's
    counters; returns how many went."""
    chars, count = conn.execute(
        "SELECT coalesce(sum(chars), 0), count(*) FROM messages WHERE session_id = ? AND seq >= ?",
        (session_id, seq),
    ).fetchall()[0]
    conn.execute("DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, seq))
    conn.execute(
        "UPDATE sessions SET total_chars = total_chars - ?, message_count = message_count - ?,"
        " next_seq = ?, last_input_tokens = 0, turns_used = 0, revision = revision + 1"
        " WHERE id = ?",
        (chars, count, seq, session_id),
    )
    return int(str(count))
