"""Full-text search over the stored messages (the FTS5 index of schema migration 4).

The index is kept in step with the messages by triggers, inside whatever transaction
writes them, so a search sees exactly the history as stored: what a compaction evicted
or a rewind removed is gone from it, the recap that replaced it is there.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import apsw

from seri.io.session.store import Store
from seri.pure.inputs.errors import SeriError
from seri.pure.session.search_query import SearchQuery

# Around the matched words in a snippet; the caller turns them into what its output uses.
MARK_START = "\x02"
MARK_END = "\x03"
SNIPPET_TOKENS = 16


class SearchHit(NamedTuple):
    session_id: str
    seq: int
    role: str
    kind: str
    created: float
    title: str
    project: str
    parent_id: str
    snippet: str
    score: float


class SearchFailed(SeriError):
    """The store refused the query (only FTS5 syntax given with --fts can be refused)."""


def search_messages(
    store: Store, query: SearchQuery, project: str | None, limit: int
) -> list[SearchHit]:
    """The best ``limit`` matches, best first (bm25), of one project's sessions or all."""
    where = "message_search MATCH ? AND s.incomplete = 0"
    params: list[Any] = [query.match]
    if project is not None:
        where += " AND s.project = ?"
        params.append(project)
    params.append(limit)
    # Constant columns and conditions; the values are bound.
    sql = (
        "SELECT t.session_id, t.seq, m.role, m.kind, m.created, s.title, s.project,"  # noqa: S608
        " coalesce(s.parent_id, ''),"
        f" snippet(message_search, 0, '{MARK_START}', '{MARK_END}', '…', {SNIPPET_TOKENS}),"
        " bm25(message_search)"
        " FROM message_search"
        " JOIN message_text AS t ON t.id = message_search.rowid"
        " JOIN sessions AS s ON s.id = t.session_id"
        " JOIN messages AS m ON m.session_id = t.session_id AND m.seq = t.seq"
        # Not what a compaction walled off and the purge has not deleted yet.
        " AND m.seq >= s.compacted_before"
        f" WHERE {where} ORDER BY bm25(message_search), t.session_id, t.seq LIMIT ?"
    )
    try:
        with store.snapshot() as conn:
            rows: list[Any] = conn.execute(sql, params).fetchall()
    except apsw.SQLError as exc:
        raise SearchFailed(
            f"the search {query.match[:80]!r} is not valid FTS5 syntax ({exc}); drop --fts "
            "to search for the words as written"
        ) from None
    return [SearchHit(*row) for row in rows]
