"""Appending from tests and helper processes, which are not a chat with a view of the session.

seri's own writers pass the revision they last saw (``insert_messages(..., revision=)``), so
that another writer in between makes the append fail instead of interleaving. A test that
seeds a session, or a helper that plays a second writer on purpose, appends to whatever is
stored: it reads the revision inside the same IMMEDIATE transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from seri.io.session import conversations, session_table
from seri.io.session.store import Store
from seri.pure.session.records import Message


def insert_latest(conn: Any, session_id: str, messages: Iterable[Message], now: float) -> int:
    revision = session_table.current_revision(conn, session_id)
    return conversations.insert_messages(conn, session_id, messages, now, revision=revision)


def append_latest(store: Store, session_id: str, messages: Sequence[Message], now: float) -> int:
    with store.write() as conn:
        return insert_latest(conn, session_id, messages, now)
