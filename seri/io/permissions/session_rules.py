"""Allow rules a person added to a session by answering "always" to an approval.

They belong to the session, not to the run: a later ``--continue``/``--resume`` allows what
was allowed, and ``/permissions`` shows each with the call that it was first given for. A
rule is stored once per session (the first call it was given for is kept).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from seri.io.session.store import Store


@attrs.frozen
class SessionRule:
    """One stored "always": the allow rule, the tool call it was given for, and when."""

    rule: str
    tool: str
    subject: str
    at: float


def add_session_rules(
    store: Store, session_id: str, rules: Iterable[str], *, tool: str, subject: str, now: float
) -> None:
    with store.write() as conn:
        for rule in rules:
            conn.execute(
                "INSERT INTO session_rules(session_id, rule, tool, subject, at)"
                " VALUES (?,?,?,?,?) ON CONFLICT(session_id, rule) DO NOTHING",
                (session_id, rule, tool, subject, now),
            )


def list_session_rules(store: Store, session_id: str) -> tuple[SessionRule, ...]:
    rows = store.connection.execute(
        "SELECT rule, tool, subject, at FROM session_rules WHERE session_id = ? ORDER BY id",
        (session_id,),
    )
    return tuple(
        SessionRule(str(rule), str(tool), str(subject), float(at))
        for rule, tool, subject, at in rows
    )
