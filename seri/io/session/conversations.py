"""A session's conversation in the store: its messages, appended, read and cut back.

Appending is an INSERT at ``next_seq`` plus an UPDATE of the session row's
counters: the cost is the same at message 10 and message 100,000, because
nothing is rewritten and the running totals live on the session row. The session rows
themselves (created, forked, found, read back on resume) are ``seri.io.session.session_table``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import apsw

from seri.io.session.store import Store
from seri.pure.compaction.tokens import message_chars
from seri.pure.inputs import json_text
from seri.pure.inputs.errors import SeriError, SessionChanged
from seri.pure.inputs.lone_surrogates import replace_lone_surrogates
from seri.pure.session.records import Message
from seri.pure.session.session_titles import title_from_prompt

# A row of the live conversation: the session's messages from its wall up (the latest recap's
# seq, ``sessions.compacted_before``). Below the wall lie what compactions evicted and the
# purge (``seri.io.compaction.eviction_purge``) has not deleted yet: every reader of a session's
# messages filters with this, the session's id bound as ?1 (a plain ? after it is ?2, and so on).
_WALL = "(SELECT compacted_before FROM sessions WHERE id = ?1)"
LIVE = f"session_id = ?1 AND seq >= {_WALL}"


def live_rows(columns: str, more: str = "") -> str:
    """The query of ``columns`` of a session's live messages, then ``more`` (conditions after
    AND, ORDER BY, LIMIT): the session's id is bound as ?1, the placeholders in ``more`` next."""
    return f"SELECT {columns} FROM messages WHERE {LIVE}{more}"  # noqa: S608 (constants only)


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
    from seri.io.session.codec import message_to_json  # cattrs loads only when messages move

    # A plain list of Any: apsw's stubs type each cell as a union.
    row: list[Any] = list(
        conn.execute("SELECT next_seq, title, revision FROM sessions WHERE id = ?", (session_id,))
    )
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


# For the person to run, in the message about a damaged row.
_DELETE_ROW = (
    "sqlite3 seri.db \"DELETE FROM messages WHERE session_id = '{session_id}' AND seq = {seq}\""
)


class DamagedSession(SeriError):
    """A stored row that cannot be read: named, with what to do; other sessions are fine."""


def decode_message(session_id: str, seq: int, body: object) -> Message:
    from seri.io.session.codec import message_from_json

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
# The live rows past ?2, with one lower bound for the primary key's range: given LIVE's wall
# and `seq > ?2` apart, SQLite walks the index from the wall and filters, so chunk k cost k
# thousand rows (100,000 messages: 3 s, each chunk slower than the one before).
_LIVE_AFTER = f"session_id = ?1 AND seq >= max(?2 + 1, {_WALL})"


def message_line_chunks(store: Store, session_id: str) -> Iterator[str]:
    """The session's messages as JSON Lines, in order, a thousand lines a chunk."""
    # S608: a constant line expression and limit; the values are bound.
    sql = (
        "SELECT max(seq), group_concat(line, char(10)) || char(10), min(damaged) FROM ("  # noqa: S608
        f"SELECT seq, {_MESSAGE_LINE} AS line,"
        " CASE WHEN json_valid(body) AND substr(body, 1, 2) = '{\"' THEN NULL ELSE seq END"
        " AS damaged FROM messages"
        f" WHERE {_LIVE_AFTER} ORDER BY seq LIMIT {LINE_CHUNK})"
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
