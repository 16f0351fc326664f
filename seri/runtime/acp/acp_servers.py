"""The MCP servers an ACP client hands seri (``session/new``'s ``mcpServers``), under the
trust rules of a project's ``.mcp.json``: an entry approved for this project as it stands
starts; any other is asked about (allow once, allow always = approved for the project as
``seri mcp approve`` does, reject), before the session's first task, as the terminal asks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seri.pure.acp import acp_updates

if TYPE_CHECKING:
    from seri.io.session.store import Store
    from seri.pure.inputs.settings import Settings
    from seri.pure.mcp.mcp_config import McpServerConfig

# Asked about one server (its name, its review text): "once", "always" or "no".
AskServer = Callable[[str, str], str]

SOURCE = "the ACP client's mcpServers"


def client_servers(
    servers: object, project: str, settings: Settings
) -> tuple[McpServerConfig, ...]:
    """The client's servers as seri's entries, expanded as a project's are (no secrets);
    the ones that cannot start are said on stderr."""
    from seri.pure.mcp.mcp_config import servers_from_document
    from seri.runtime.mcp.mcp_tools import expansion_env, project_policy_of

    document, skipped = acp_updates.mcp_document(servers)
    for name in skipped:
        print(
            f"seri acp: MCP server {name} not started: seri starts stdio servers only",
            file=sys.stderr,
        )
    if not document["mcpServers"]:
        return ()
    env = expansion_env(Path(project))
    found = servers_from_document(document, env, SOURCE, project_policy_of(settings))
    for problem in found.problems:
        print(f"seri acp: MCP server {problem.name}: {problem.message}", file=sys.stderr)
    return found.servers


def trusted(
    store: Store, project: str, servers: tuple[McpServerConfig, ...], ask: AskServer
) -> tuple[McpServerConfig, ...]:
    """The servers that may start: approved for ``project`` as they are, or allowed now."""
    from seri.io.mcp.mcp_approvals import approved_digests
    from seri.runtime.mcp.mcp_review import remember_approved, review_text

    approved = approved_digests(store, project)
    chosen: list[McpServerConfig] = []
    for server in servers:
        if approved.get(server.name) == server.digest:
            chosen.append(server)
            continue
        answer = ask(server.name, review_text(server, store, Path(project)))
        if answer == "always":
            remember_approved(store, Path(project), (server,))
        if answer in ("once", "always"):
            chosen.append(server)
        else:
            print(f"seri acp: MCP server {server.name} not started: not approved", file=sys.stderr)
    return tuple(chosen)


def server_question(session_id: str, name: str, review: str) -> dict[str, Any]:
    """The ``session/request_permission`` that asks whether to start a client's server."""
    return {
        "sessionId": session_id,
        "toolCall": {
            "toolCallId": f"mcp-server-{name}",
            "title": f"start MCP server {name}",
            "kind": "execute",
            "status": "pending",
            "content": [{"type": "content", "content": {"type": "text", "text": review}}],
        },
        "options": acp_updates.permission_options((f"mcp server {name}",)),
    }
