"""Which of a project's MCP servers (its ``.mcp.json``) a person approved to start.

An approval is for one server of one project as it was when approved (its ``identity``: the
command and arguments, or the URL): a repository that changes the command after approval gets
asked again.
"""

from __future__ import annotations

from collections.abc import Iterable

from seri.io.store import Store


def approved_identities(store: Store, project: str) -> dict[str, str]:
    """Each approved server of ``project``, with the identity it was approved as."""
    rows = store.connection.execute(
        "SELECT server, identity FROM mcp_approvals WHERE project = ?", (project,)
    )
    return {str(server): str(identity) for server, identity in rows}


def approve(store: Store, project: str, servers: Iterable[tuple[str, str]], now: float) -> None:
    """Approve ``(server, identity)`` pairs for ``project`` (replacing earlier approvals)."""
    with store.write() as conn:
        for server, identity in servers:
            conn.execute(
                "INSERT OR REPLACE INTO mcp_approvals(project, server, identity, at) "
                "VALUES (?,?,?,?)",
                (project, server, identity, now),
            )


def revoke(store: Store, project: str, servers: Iterable[str]) -> int:
    """Withdraw approvals; returns how many there were."""
    count = 0
    with store.write() as conn:
        for server in servers:
            rows = conn.execute(
                "DELETE FROM mcp_approvals WHERE project = ? AND server = ? RETURNING server",
                (project, server),
            ).fetchall()
            count += len(rows)
    return count
