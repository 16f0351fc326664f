"""``session/list`` for ``seri acp``: sessions over seri.db, paged, and answered even while a
task runs (on a thread of its own, through a read-only connection of its own), since a
listing only reads; an editor asks for it to show its history panel whenever it likes."""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from seri.io.session.store import Store, open_store
from seri.pure.acp import acp_wire
from seri.pure.acp.acp_wire import AcpError, ClientMessage
from seri.pure.mcp import jsonrpc
from seri.runtime.acp.acp_connection import Connection

PAGE = 50


def listed(params: dict[str, Any], store: Store) -> dict[str, Any]:
    """One page of sessions, newest first (``cwd`` filters, ``cursor`` pages on)."""
    from seri.io.session.session_table import list_sessions
    from seri.pure.acp import acp_updates

    cwd = params.get("cwd")
    project = os.path.realpath(cwd) if isinstance(cwd, str) and cwd else None
    sessions = list_sessions(store, project)
    cursor = params.get("cursor")
    start, end, after = acp_updates.page(
        len(sessions), cursor if isinstance(cursor, str) else None, PAGE
    )
    shown = [acp_updates.session_info(s, _iso(s.updated)) for s in sessions[start:end]]
    return {"sessions": shown, "nextCursor": after}


def answer_during_task(conn: Connection, profile_root: str, call: ClientMessage) -> None:
    """Answer a session/list that came while a task runs (called on its own thread)."""
    id_ = call.id if call.id is not None else 0
    try:
        store = open_store(profile_root, readonly=True)
        try:
            line = acp_wire.result(id_, listed(call.params, store))
        finally:
            store.close()
    except AcpError as e:
        line = acp_wire.error(id_, e.code, str(e))
    except Exception as e:  # noqa: BLE001 - this request fails, the task goes on
        print(f"seri acp: {call.method} during a task failed: {e!r}", file=sys.stderr)
        line = acp_wire.error(id_, jsonrpc.INTERNAL_ERROR, f"internal error: {type(e).__name__}")
    conn.send(line)


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))
