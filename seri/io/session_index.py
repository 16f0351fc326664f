"""The session list as plain rows: `seri sessions` reads it without the record machinery.

Listing is the command people and scripts run most; it must start in a few tens of
milliseconds, so this module imports nothing beyond the store.
"""

from __future__ import annotations

from typing import Any

from seri.io.store import Store

SESSION_COLUMNS = "id, project, created, updated, model, title, message_count, parent_id"


def session_rows(store: Store, project: str | None, *, limit: int | None = None) -> list[Any]:
    """Newest first, as (id, project, created, updated, model, title, messages, parent) rows.

    Subagent sessions are listed under their parent, not here.
    """
    where = "parent_id IS NULL" + (" AND project = ?" if project is not None else "")
    params: tuple[Any, ...] = (project,) if project is not None else ()
    sql = f"SELECT {SESSION_COLUMNS} FROM sessions WHERE {where} ORDER BY updated DESC, id"  # noqa: S608
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return list(store.connection.execute(sql, params))


def pending_legacy_names(store: Store, names: list[str]) -> list[str]:
    """Which of the legacy file names have not been imported (or rejected) yet."""
    done = {name for (name,) in store.connection.execute("SELECT name FROM legacy_imports")}
    return [name for name in names if name not in done]


def legacy_import_marks(store: Store) -> list[tuple[str, str, str]]:
    """(file name, status, detail) of every older release's file seen, by name."""
    rows = store.connection.execute("SELECT name, status, detail FROM legacy_imports ORDER BY name")
    return [(str(name), str(status), str(detail or "")) for name, status, detail in rows]
