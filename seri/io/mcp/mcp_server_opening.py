"""Opening one MCP server's connection: its transport, the handshake, its tool list.

A stdio server is spawned with ``seri.pure.mcp.mcp_environment``'s environment (seri's own,
credentials held back, plus its entry's ``env``) in its ``cwd`` (relative to the project); an
HTTP server is reached at its URL, with httpx imported only then. The handshake settles the
era; a connection that fails it, or fails to list its tools, is closed again and comes back as
a ``Failure`` carrying what the transport saw (a process's stderr). ``seri.io.mcp.mcp_hub`` decides
when to open (first start, restart) and what an opened server means for the session.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path

from seri.io.mcp.mcp_server_status import ServerSlot
from seri.io.mcp.mcp_session import McpConnection, ToolList
from seri.io.mcp.mcp_stdio import StdioTransport
from seri.io.mcp.mcp_transport import EXITED, Failure, Transport
from seri.pure.mcp.jsonrpc import Notification
from seri.pure.mcp.mcp_config import HTTP
from seri.pure.mcp.mcp_environment import server_environment
from seri.pure.mcp.mcp_protocol import ServerInfo

Opened = tuple[McpConnection, ServerInfo, ToolList]


class ServerOpener:
    """Opens the connections of one session's servers, all with the same client settings."""

    def __init__(
        self,
        *,
        parent_env: Mapping[str, str],
        project_dir: Path,
        secrets: tuple[str, ...],
        client_version: str,
        probe_timeout: float,
        max_message_bytes: int,
    ) -> None:
        self._parent_env = dict(parent_env)
        self._project_dir = project_dir
        self._secrets = secrets
        self._client_version = client_version
        self._probe_timeout = probe_timeout
        self._max_message = max_message_bytes

    def open(
        self,
        server: ServerSlot,
        era: str,
        deadline: float,
        *,
        closing: Callable[[], bool],
        on_notification: Callable[[Notification], None],
        on_exit: Callable[[Transport], None],
    ) -> Opened | Failure:
        """``server`` connected in ``era`` by ``deadline``; kept in its ``opening`` list while
        it starts, so that a hub that is ``closing`` stops it too."""
        connection = McpConnection(
            self._transport(server, on_notification, on_exit),
            server=server.config.name,
            client_version=self._client_version,
            era=era,
            over_http=server.config.transport == HTTP,
            probe_timeout=self._probe_timeout,
        )
        with server.lock:
            if closing():
                return Failure(EXITED, "seri is closing")
            server.opening.append(connection)
        try:
            return _opened(connection, deadline)
        finally:
            with server.lock:
                if connection in server.opening:
                    server.opening.remove(connection)

    def _transport(
        self,
        server: ServerSlot,
        notified: Callable[[Notification], None],
        on_exit: Callable[[Transport], None],
    ) -> Transport:
        config = server.config
        if config.transport == HTTP:
            from seri.io.mcp.mcp_http import HttpTransport  # httpx only when a server needs it

            return HttpTransport(
                config.url,
                config.headers,
                max_message_bytes=self._max_message,
                on_notification=notified,
            )
        environment = server_environment(self._parent_env, config.env, self._secrets)
        server.withheld = environment.withheld
        cwd = Path(config.cwd) if config.cwd else self._project_dir
        return StdioTransport(
            config.command,
            config.args,
            env=environment.as_dict(),
            cwd=cwd if cwd.is_absolute() else self._project_dir / cwd,
            max_message_bytes=self._max_message,
            on_notification=notified,
            on_exit=on_exit,
        )


def _opened(connection: McpConnection, deadline: float) -> Opened | Failure:
    """Say hello and list the tools; closed again when either fails."""
    info = connection.open(deadline)
    listed: ToolList | Failure = (
        info
        if isinstance(info, Failure)
        else connection.list_tools(max(deadline - time.monotonic(), 0.01))
    )
    if isinstance(info, Failure) or isinstance(listed, Failure):
        failure = info if isinstance(info, Failure) else listed
        assert isinstance(failure, Failure)
        detail = connection.transport.diagnostics()
        connection.close()
        message = failure.message
        if detail and detail not in message:
            message = f"{message}; {detail}"
        return Failure(failure.kind, message)
    return connection, info, listed
