"""A session's goal in the store (see ``seri.pure.agent.goals``): its text and check command, how
it stands (``open`` until a check passes, then ``done``), how its last run ended (``done``,
``stalled``, ``max_checks``, ``wall`` or the status of the task that ended it; "" before any
did) and how many checks ran. A goal a run left unmet stays open: the next task of the
session (a --continue, a typed line) is checked by it again. One goal a session: setting a
new one replaces it; /goal clear ends it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import apsw
import attrs

from seri.io.agent.goal_listing import goal_fields
from seri.io.session.store import Store

if TYPE_CHECKING:
    from seri.pure.agent.goals import Goal

OPEN = "open"


@attrs.frozen
class StoredGoal:
    goal: Goal
    status: str
    checks: int
    last_end: str = ""

    @property
    def is_open(self) -> bool:
        return self.status == OPEN

    def export(self) -> dict[str, Any]:
        return goal_fields(
            self.goal.text, self.goal.command, self.status, self.checks, self.last_end
        )


def set_goal(store: Store, session_id: str, goal: Goal, now: float) -> None:
    with store.write() as conn:
        conn.execute(
            "INSERT INTO session_goals(session_id, text, command, status, checks, set_at,"
            " updated) VALUES (?,?,?,?,0,?,?) ON CONFLICT(session_id) DO UPDATE SET"
            " text = excluded.text, command = excluded.command, status = excluded.status,"
            " last_end = '', checks = 0, set_at = excluded.set_at, updated = excluded.updated",
            (session_id, goal.text, goal.command, OPEN, now, now),
        )


def clear_goal(store: Store, session_id: str) -> bool:
    """Forget the session's goal; whether it had one."""
    with store.write() as conn:
        conn.execute("DELETE FROM session_goals WHERE session_id = ?", (session_id,))
        return bool(conn.changes())


def note_goal(store: Store, session_id: str, ended: str, checks: int, now: float) -> None:
    """How the goal stands after a check (``ended`` is ``open``) or at the end of its run
    (``ended`` is how the run ended: ``done`` closes the goal, any other end leaves it open)."""
    status = "done" if ended == "done" else OPEN
    with store.write() as conn:
        conn.execute(
            "UPDATE session_goals SET status = ?, checks = ?, updated = ?,"
            " last_end = CASE WHEN ? = 'open' THEN last_end ELSE ? END WHERE session_id = ?",
            (status, checks, now, ended, ended, session_id),
        )


def load_goal(store: Store, session_id: str) -> StoredGoal | None:
    rows: list[Any] = store.connection.execute(
        "SELECT text, command, status, checks, last_end FROM session_goals WHERE session_id = ?",
        (session_id,),
    ).fetchall()
    if not rows:
        return None
    from seri.pure.agent.goals import Goal

    text, command, status, checks, last_end = rows[0]
    return StoredGoal(Goal(str(text), str(command)), str(status), int(checks), str(last_end))


def copy_goal(conn: apsw.Connection, source_id: str, target_id: str) -> None:
    """A fork goes on toward its source's goal."""
    conn.execute(
        "INSERT INTO session_goals(session_id, text, command, status, last_end, checks,"
        " set_at, updated) SELECT ?, text, command, status, last_end, checks, set_at, updated"
        " FROM session_goals"
        " WHERE session_id = ?",
        (target_id, source_id),
    )


def carried_pins(store: Store, session_id: str) -> tuple[str, ...]:
    """What every recap of the session carries verbatim: its open goal, then its pins."""
    from seri.io.session.pins import list_pins

    pins = list_pins(store, session_id)
    stored = load_goal(store, session_id)
    if stored is None or not stored.is_open:
        return pins
    from seri.pure.agent.goals import goal_pin

    return (goal_pin(stored.goal), *pins)
