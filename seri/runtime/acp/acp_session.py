"""The session controller as ``seri acp`` drives it: ``SessionController`` with the two
things an ACP client needs that the terminal does not (kept here, not in the controller,
whose room is the terminal's and every front-end's)."""

from __future__ import annotations

from seri.io.tools.file_port import FilePort
from seri.pure.mcp.mcp_config import McpServerConfig
from seri.runtime.session.controller import SessionController


class AcpSession(SessionController):
    def start(self) -> str:
        """Start the session now, not with its first task: session/new answers its id."""
        self._ensure_session(for_task=False)
        return self.session_id

    def add_servers(self, configs: tuple[McpServerConfig, ...]) -> None:
        """Start these MCP servers too for the rest of the run: the client's, once trusted
        under a project's rules (``seri.runtime.acp.acp_servers``)."""
        self._bench.servers.add(configs, self._api_key)

    def use_files(self, files: FilePort) -> None:
        """The file tools read and write through ``files`` (an ACP client's buffers) from the
        next task on, under every rule they keep on the disk."""
        self._bench.files = files
