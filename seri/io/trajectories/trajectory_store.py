"""Reading recordings out of seri.db: export and counts (ageing out is trajectory_prune).

Export must never hold a long read transaction against a running chat: one
open reader keeps every checkpoint from finishing and the WAL grows without
bound. So it reads in chunks of a few hundred rows by ``id > last``, each chunk
one statement and so its own short transaction. Its upper bounds are fixed
when it starts, so what it writes is the store as it was at that moment (less
anything pruned meanwhile), not a mix of then and now.

Each line is built by SQLite itself: the stored body is already a JSON object,
so the line is the four keys export adds followed by the body minus its
opening brace. No row is parsed or re-serialised in Python, and a chunk comes
back as one UTF-8 blob, which is what keeps export within reach of
``sqlite3 -json``. For the same reason this module needs nothing but apsw:
export starts in a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import apsw

from seri.io.session.store import Store

CHUNK_ROWS = 500

_RUN_KEYS = (
    """',"session":' || json_quote(session_id) || ',"run":' || json_quote(id)"""
    """ || ',"at":"'"""
)


def _line_sql(type_sql: str, keys: str, at: str, body: str) -> str:
    """SQL for one output line; ``keys`` is the run's ``,"session":…,"run":…,"at":"``.

    The recorder writes compact objects (``{"key":...``), spliced as they are.
    Anything else is normalised by SQLite's ``json()``, and a body that is not
    an object at all is carried as a string, so every line still parses.
    ``datetime(…, 'subsec')`` is used because it is twice as fast as strftime.
    """
    obj = f"json_valid({body}) AND json_type({body}) = 'object'"
    return (
        f"""'{{"type":' || {type_sql} || {keys}"""
        f" || coalesce(replace(datetime({at}, 'unixepoch', 'subsec'), ' ', 'T') || 'Z', '')"
        """ || '"'"""
        f" || CASE WHEN substr({body}, 1, 2) = '{{\"' AND json_valid({body})"
        f" THEN ',' || substr({body}, 2)"
        f" WHEN {body} = '{{}}' THEN '}}'"
        f" WHEN {obj} AND json({body}) = '{{}}' THEN '}}'"
        f" WHEN {obj} THEN ',' || substr(json({body}), 2)"
        f""" ELSE ',"body":' || json_quote({body}) || '}}' END"""
    )


_HEADER_LINE = _line_sql("""'"header"'""", _RUN_KEYS, "started", "header")
# Within one run the session and run never change: they come in as one parameter.
_EVENT_LINE = _line_sql("json_quote(type)", ":keys", "at", "body")


class ExportFilter(NamedTuple):
    session_id: str = ""
    since: float | None = None


class _Run(NamedTuple):
    rowid: int
    run_id: str
    started: float
    keys: str
    header: bytes


def _one_row(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first row, as Any: apsw's stubs type each cell as a union."""
    return conn.execute(sql, params).fetchall()[0]


def export_chunks(store: Store, where: ExportFilter | None = None) -> Iterator[bytes]:
    """UTF-8 JSON Lines in chunks of whole lines: each run's header, then its events."""
    where = where or ExportFilter()
    conn = store.connection
    with store.snapshot():
        row = _one_row(
            conn,
            "SELECT (SELECT coalesce(max(rowid), 0) FROM runs),"
            " (SELECT coalesce(max(id), 0) FROM events)",
        )
    last_run_rowid, last_event_id = int(row[0]), int(row[1])
    after = 0
    while runs := _run_chunk(conn, after, last_run_rowid, where):
        for run in runs:
            yield from _run_lines(conn, run, last_event_id, where.since)
        after = runs[-1].rowid


def _run_chunk(conn: apsw.Connection, after: int, upto: int, where: ExportFilter) -> list[_Run]:
    # S608: the f-strings join constant SQL fragments; every value is bound.
    sql = (
        f"SELECT rowid, id, started, {_RUN_KEYS}, CAST({_HEADER_LINE} || char(10) AS BLOB)"  # noqa: S608
        " FROM runs WHERE rowid > ? AND rowid <= ?"
    )
    params: list[object] = [after, upto]
    if where.session_id:
        sql += " AND session_id = ?"
        params.append(where.session_id)
    sql += f" ORDER BY rowid LIMIT {CHUNK_ROWS}"
    rows: list[Any] = conn.execute(sql, params).fetchall()
    return [_Run(*row) for row in rows]


def _run_lines(conn: apsw.Connection, run: _Run, upto: int, since: float | None) -> Iterator[bytes]:
    """The header, then the events a chunk at a time. With --since, a run that
    started earlier keeps its header only if some of its events are recent enough.

    A chunk's lines are joined by group_concat over a subquery that is ordered
    and limited, so SQLite runs it as a co-routine and the lines come in id
    order (a test holds it to that).
    """
    recent = "" if since is None else " AND at >= :since"
    # S608: the f-strings join constant SQL fragments; every value is bound.
    sql = (
        "SELECT max(id), CAST(group_concat(line, char(10)) || char(10) AS BLOB) FROM ("  # noqa: S608
        f"SELECT id, {_EVENT_LINE} AS line FROM events"
        f" WHERE run_id = :run AND id > :after AND id <= :upto{recent}"
        f" ORDER BY id LIMIT {CHUNK_ROWS})"
    )
    params: dict[str, object] = {"run": run.run_id, "upto": upto, "keys": run.keys, "after": 0}
    if since is not None:
        params["since"] = since
    header_due = since is None or run.started >= since
    if header_due:
        yield run.header
    while True:
        last, lines = _one_row(conn, sql, params)
        if last is None:
            return
        if not header_due:
            header_due = True
            yield run.header
        params["after"] = last
        yield lines


# -- counts ------------------------------------------------------------------------------------


class RecordingCounts(NamedTuple):
    sessions: int
    runs: int
    events: int


def recording_counts(store: Store) -> RecordingCounts:
    with store.snapshot() as conn:
        row = _one_row(
            conn,
            "SELECT (SELECT count(DISTINCT session_id) FROM runs), (SELECT count(*) FROM runs),"
            " (SELECT count(*) FROM events)",
        )
    return RecordingCounts(int(row[0]), int(row[1]), int(row[2]))
