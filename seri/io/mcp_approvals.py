"""Which of a project's MCP servers (its ``.mcp.json``) a person approved to start.

An approval is for one server of one project as it was when approved: the digest of its
whole entry (``seri.pure.trust.entry_digest``), so a repository that changes any field after
approval gets asked again. A row holds that digest and the entry's masked form (what the
person was shown), never a secret. Rows from before approvals covered the whole entry hold
``seri.pure.trust.OLD_FORM`` (schema migration 10 put it in place of the command and arguments
they held, which could carry a key): such a server is asked about again, and told why.
"""

from __future__ import annotations

from collections.abc import Iterable

from seri.io.store import Store


def approved_digests(store: Store, project: str) -> dict[str, str]:
    """Each approved server of ``project``, with the digest it was approved as."""
    rows = store.connection.execute(
        "SELECT server, identity FROM mcp_approvals WHERE project = ?", (project,)
    )
    return {str(server): str(digest) for server, digest in rows}


def approved_shown(store: Store, project: str) -> dict[str, str]:
    """Each approved server of ``project``, with the masked entry it was approved as."""
    rows = store.connection.execute(
        "SELECT server, shown FROM mcp_approvals WHERE project = ?", (project,)
    )
    return {str(server): str(shown) for server, shown in rows}


def approve(
    store: Store, project: str, servers: Iterable[tuple[str, str, str]], now: float
) -> None:
    """Approve ``(server, digest, masked entry)`` for ``project`` (replacing earlier ones)."""
    with store.write() as conn:
        for server, digest, shown in servers:
            conn.execute(
                "INSERT OR REPLACE INTO mcp_approvals(project, server, identity, shown, at) "
                "VALUES (?,?,?,?,?)",
                (project, server, digest, shown, now),
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
