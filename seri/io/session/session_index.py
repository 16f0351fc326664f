"""The session list as plain rows: `seri sessions` reads it without the record machinery.

Listing is the command people and scripts run most; it must start in a few tens of
milliseconds, so this module imports nothing beyond the store.
"""

from __future__ import annotations

from seri.io.session.store import Store

# No typing at import (see seri.io.session.store).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SESSION_COLUMNS = "id, project, created, updated, model, title, message_count, parent_id"


def session_rows(store: Store, project: str | None, *, limit: int | None = None) -> list[Any]:
    """Newest first, as (id, project, created, updated, model, title, messages, parent) rows.

    Subagent sessions are listed under their parent, not here.
    """
    # Not a handoff's copy still being made (seri.runtime.session.handoff).
    where = "parent_id IS NULL AND incomplete = 0" + (
        " AND project = ?" if project is not None else ""
    )
    params: tuple[Any, ...] = (project,) if project is not None else ()
    # S608: constant columns and conditions; the project is bound.
    sql = f"SELECT {SESSION_COLUMNS} FROM sessions WHERE {where} ORDER BY updated DESC, id"  # noqa: S608
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return list(store.connection.execute(sql, params))


# The run tags of the session ``s`` as one JSON object (``{}`` when none), keys in order.
TAGS_OBJECT = (
    "(SELECT coalesce(json_group_object(t.key, t.value), '{}')"
    " FROM (SELECT key, value FROM session_tags WHERE session_id = s.id ORDER BY key) AS t)"
)
# The listing's columns: the session's, then its recorded usage (zeros when none), then its
# run tags.
LISTING_COLUMNS = (
    "s.id, s.project, s.created, s.updated, s.model, s.title, s.message_count, s.parent_id,"
    " coalesce(u.calls, 0), coalesce(u.input_tokens, 0), coalesce(u.output_tokens, 0),"
    " coalesce(u.cached_tokens, 0), coalesce(u.cost, 0), coalesce(u.costed_calls, 0),"
    f" {TAGS_OBJECT}"
)


def listing_rows(store: Store, project: str | None, *, limit: int | None = None) -> list[Any]:
    """Newest first, as session rows (see ``session_rows``) followed by calls, input, output
    and cached tokens, cost, the number of calls that reported a cost, and the run tags (a
    JSON object)."""
    where = "s.parent_id IS NULL AND s.incomplete = 0" + (
        " AND s.project = ?" if project is not None else ""
    )
    params: tuple[Any, ...] = (project,) if project is not None else ()
    sql = (
        f"SELECT {LISTING_COLUMNS} FROM sessions AS s"  # noqa: S608 (constant columns)
        " LEFT JOIN session_usage AS u ON u.session_id = s.id"
        f" WHERE {where} ORDER BY s.updated DESC, s.id"
    )
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


def legacy_dir_seen(store: Store) -> str:
    """The stamp of the older release's directory when nothing in it was left to import."""
    rows = store.connection.execute(
        "SELECT value FROM profile_facts WHERE key = 'legacy_dir'"
    ).fetchall()
    return str(rows[0][0]) if rows else ""


def remember_legacy_dir(store: Store, stamp: str) -> None:
    with store.write() as conn:
        conn.execute(
            "INSERT INTO profile_facts(key, value) VALUES ('legacy_dir', ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (stamp,),
        )
