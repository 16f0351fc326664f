"""Which of a project's MCP servers (its ``.mcp.json``) a person approved to start.

An approval is for one server of one project as it was when approved: the digest of its
whole entry (``seri.pure.permissions.trust.entry_digest``), so a repository that changes any field
after approval gets asked again. A row holds that digest and the entry's masked form (what the
person was shown), never a secret. Rows from before approvals covered the whole entry hold
``seri.pure.permissions.trust.OLD_FORM`` (schema migration 10 put it in place of the command and
arguments they held, which could carry a key): such a server is asked about again, and told why.

A project's hooks and skills are approved the same way, in the same table: their rows name
the item ``<kind>:<name>`` (``hook:…``, ``skill:…``; ``seri.pure.permissions.trust.PROJECT_KINDS``),
and every function here reads and writes the rows of one kind only (MCP servers' by default).
"""

from __future__ import annotations

from collections.abc import Iterable

from seri.io.session.store import Store
from seri.pure.permissions.trust import MCP_SERVER, PROJECT_KINDS


def _row_name(kind: str, name: str) -> str:
    return name if kind == MCP_SERVER else f"{kind}:{name}"


def _of_kind(kind: str, row: str) -> str | None:
    """The item's name if the row is of ``kind``, else None."""
    prefix, colon, rest = row.partition(":")
    row_kind = prefix if colon and prefix in PROJECT_KINDS else MCP_SERVER
    if row_kind != kind:
        return None
    return row if kind == MCP_SERVER else rest


def approved_digests(store: Store, project: str, kind: str = MCP_SERVER) -> dict[str, str]:
    """Each approved server of ``project``, with the digest it was approved as."""
    return _column(store, project, kind, "identity")


def approved_shown(store: Store, project: str, kind: str = MCP_SERVER) -> dict[str, str]:
    """Each approved server of ``project``, with the masked entry it was approved as."""
    return _column(store, project, kind, "shown")


def _column(store: Store, project: str, kind: str, column: str) -> dict[str, str]:
    rows = store.connection.execute(
        f"SELECT server, {column} FROM mcp_approvals WHERE project = ?",  # noqa: S608 - ours
        (project,),
    )
    found = {}
    for row, value in rows:
        name = _of_kind(kind, str(row))
        if name is not None:
            found[name] = str(value)
    return found


def approve(
    store: Store,
    project: str,
    servers: Iterable[tuple[str, str, str]],
    now: float,
    kind: str = MCP_SERVER,
) -> None:
    """Approve ``(server, digest, masked entry)`` for ``project`` (replacing earlier ones)."""
    with store.write() as conn:
        for server, digest, shown in servers:
            conn.execute(
                "INSERT OR REPLACE INTO mcp_approvals(project, server, identity, shown, at) "
                "VALUES (?,?,?,?,?)",
                (project, _row_name(kind, server), digest, shown, now),
            )


def revoke(store: Store, project: str, servers: Iterable[str], kind: str = MCP_SERVER) -> int:
    """Withdraw approvals; returns how many there were."""
    count = 0
    with store.write() as conn:
        for server in servers:
            rows = conn.execute(
                "DELETE FROM mcp_approvals WHERE project = ? AND server = ? RETURNING server",
                (project, _row_name(kind, server)),
            ).fetchall()
            count += len(rows)
    return count
