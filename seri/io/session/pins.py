"""Pins: a session's short notes, carried verbatim in every recap.

Numbered per session from 1 in the order they were added (``seri pin --list``); removing one
does not renumber the others' ids, but the numbers shown are positions, so they stay 1..N.
"""

from __future__ import annotations

from typing import Any

from seri.io.session.store import Store
from seri.pure.inputs.errors import SeriError

# A pin is a note, not a document: it is in every recap, forever.
MAX_PIN_CHARS = 2_000
# ... and so are all of them together: about 2,000 tokens, a tenth of the default keep
# budget. Any number of pins under the per-pin cap would in the end fill every recap past
# the window (review-1 N12).
MAX_PINS_TOTAL_CHARS = 8_000


def add_pin(store: Store, session_id: str, text: str, now: float) -> int:
    """Pin ``text``; returns its number."""
    text = text.strip()
    if not text:
        raise SeriError("a pin needs text: seri pin --session ID TEXT")
    if len(text) > MAX_PIN_CHARS:
        raise SeriError(
            f"a pin is at most {MAX_PIN_CHARS:,} characters (this one has {len(text):,}); "
            "pin the gist, and keep the rest in a file"
        )
    with store.write() as conn:
        held: list[Any] = conn.execute(
            "SELECT coalesce(sum(length(text)), 0) FROM pins WHERE session_id = ?",
            (session_id,),
        ).fetchall()
        total = int(held[0][0]) + len(text)
        if total > MAX_PINS_TOTAL_CHARS:
            raise SeriError(
                f"the pins of a session hold at most {MAX_PINS_TOTAL_CHARS:,} characters in "
                f"all (every recap carries them); with this one session {session_id}'s would "
                f"hold {total:,}. Remove one (seri pin --session {session_id} --list, then "
                "--rm N) or pin something shorter"
            )
        conn.execute(
            "INSERT INTO pins(session_id, text, at) VALUES (?,?,?)", (session_id, text, now)
        )
        rows: list[Any] = conn.execute(
            "SELECT count(*) FROM pins WHERE session_id = ?", (session_id,)
        ).fetchall()
    return int(rows[0][0])


def list_pins(store: Store, session_id: str) -> tuple[str, ...]:
    rows = store.connection.execute(
        "SELECT text FROM pins WHERE session_id = ? ORDER BY id", (session_id,)
    )
    return tuple(str(text) for (text,) in rows)


def remove_pin(store: Store, session_id: str, number: int) -> str:
    """Remove pin ``number`` (as listed); returns its text."""
    with store.write() as conn:
        # A session has a few pins: numbering them here keeps any number, however large, out
        # of SQLite's 64-bit integers.
        rows = conn.execute(
            "SELECT id, text FROM pins WHERE session_id = ? ORDER BY id", (session_id,)
        ).fetchall()[number - 1 : number]
        if number < 1 or not rows:
            raise SeriError(
                f"session {session_id} has no pin {number}; seri pin --session {session_id} "
                "--list shows them"
            )
        conn.execute("DELETE FROM pins WHERE id = ?", (rows[0][0],))
    return str(rows[0][1])
