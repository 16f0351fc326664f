"""What the MCP hub knows and tells of each server: the state it is in, its moving parts.

``ServerSlot`` is one configured server as ``seri.io.mcp.mcp_hub`` holds it (its connection, its
tools, its restarts), guarded by its lock; ``status_of`` reads it into an ``McpServerStatus``
(for ``seri mcp list`` and start-up notices), ``tool_entries`` names the running servers' tools
as the model sees them, and an ``McpEvent`` is what a person should hear of a server later.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import attrs

from seri.io.mcp.mcp_session import McpConnection
from seri.pure.mcp.mcp_config import McpServerConfig
from seri.pure.mcp.mcp_names import name_tools
from seri.pure.mcp.mcp_protocol import ServerInfo
from seri.pure.mcp.mcp_tools import McpTool

STARTING = "starting"
READY = "ready"
RESTARTING = "restarting"
FAILED = "failed"
CLOSED = "closed"


@attrs.frozen
class McpToolEntry:
    """A tool as the model sees it (``name``) and where it lives."""

    name: str
    server: str
    tool: McpTool


@attrs.frozen
class McpServerStatus:
    """One server for ``seri mcp list`` and start-up notices."""

    name: str
    state: str
    transport: str
    source: str = ""
    era: str = ""
    version: str = ""
    server_name: str = ""
    server_version: str = ""
    tools: int = 0
    message: str = ""
    startup_seconds: float | None = None
    skipped: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()
    restarts: int = 0


@attrs.frozen
class McpEvent:
    """Something about a server a person should hear of: ``ready`` (late), ``failed``,
    ``restarting``, ``restarted``, ``gone``, ``tools_changed``; with the tools it offers
    after it."""

    server: str
    kind: str
    message: str
    tools: int = 0


class ServerSlot:
    """One configured server as the hub holds it: its moving parts, guarded by ``lock``."""

    def __init__(self, config: McpServerConfig) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.state = STARTING
        self.connection: McpConnection | None = None
        self.info: ServerInfo | None = None
        self.tools: tuple[McpTool, ...] = ()
        self.skipped: tuple[str, ...] = ()
        self.message = ""
        self.started_at = 0.0
        self.startup_seconds: float | None = None
        self.settled = threading.Event()
        self.restarts = 0
        self.generation = 0
        self.withheld: tuple[str, ...] = ()
        self.refreshing = False
        self.stale = False
        # Connections still starting (spawned, in `initialize`): close() stops these too,
        # or a server slow to answer would outlive seri.
        self.opening: list[McpConnection] = []


def tool_entries(servers: Iterable[ServerSlot]) -> tuple[McpToolEntry, ...]:
    """The tools of the running servers, each under the name the model sees."""
    pairs: list[tuple[str, McpTool]] = []
    for server in servers:
        with server.lock:
            if server.state in (READY, RESTARTING):
                pairs.extend((server.config.name, tool) for tool in server.tools)
    names = name_tools((server, tool.name) for server, tool in pairs)
    return tuple(
        McpToolEntry(name=named.exposed, server=server, tool=tool)
        for named, (server, tool) in zip(names, pairs, strict=True)
    )


def status_of(server: ServerSlot) -> McpServerStatus:
    with server.lock:
        info = server.info
        return McpServerStatus(
            name=server.config.name,
            state=server.state,
            transport=server.config.transport,
            source=server.config.source,
            era=info.era if info else "",
            version=info.version if info else "",
            server_name=info.name if info else "",
            server_version=info.server_version if info else "",
            tools=len(server.tools),
            message=server.message,
            startup_seconds=server.startup_seconds,
            skipped=server.skipped,
            withheld=server.withheld,
            restarts=server.restarts,
        )
