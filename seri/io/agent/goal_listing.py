"""Goals as the session listing shows them (``seri sessions --json``): plain values read from
the store, without the goal records, so that attrs stays out of the quick commands."""

from __future__ import annotations

from typing import Any

from seri.io.session.store import Store


def goal_fields(text: str, command: str, status: str, checks: int, last_end: str) -> dict[str, Any]:
    """One goal as every JSON view shows it (the listing, ``sessions show``, the result)."""
    return {
        "text": text,
        "command": command,
        "status": status,
        "last_end": last_end or None,
        "checks": checks,
    }


def listed_goals(store: Store, session_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The goals of many sessions at once, by session id."""
    found: dict[str, dict[str, Any]] = {}
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        rows = store.connection.execute(
            "SELECT session_id, text, command, status, checks, last_end"  # noqa: S608
            f" FROM session_goals WHERE session_id IN ({marks})",
            chunk,
        )
        for session_id, text, command, status, checks, last_end in rows:
            found[str(session_id)] = goal_fields(
                str(text), str(command), str(status), int(checks), str(last_end or "")
            )
    return found
