"""A session's MCP servers: started as it opens (in the background), the project's servers
not approved here named, and asked about before the first task when someone can answer."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from seri.io.session.store import Store
from seri.pure.inputs.settings import Settings
from seri.pure.tools.tool_definitions import should_defer
from seri.pure.tools.tool_specs import TOOL_SEARCH, ToolSpec
from seri.runtime.agent.agent import PARENT_TOOLS

if TYPE_CHECKING:
    from seri.io.mcp.mcp_server_status import McpServerStatus
    from seri.pure.mcp.mcp_config import McpServerConfig
    from seri.runtime.mcp.mcp_tools import McpTools
    from seri.runtime.trajectories.run_events import RunEvents

# Whether to start a project's server (its name, its review text): the front-end answers.
ApproveServer = Callable[[str, str], bool]


class SessionServers:
    def __init__(
        self, store: Store, settings: Settings, project: str, api_key: str, *, will_ask: bool
    ) -> None:
        self._store = store
        self._project = Path(project)
        self._threshold = settings.mcp_tool_search_threshold
        self._wait = settings.mcp_startup_wait
        # What was not started, and why (for the opening's notes).
        self.notes: tuple[str, ...] = ()
        # The project's servers not approved here (for /mcp).
        self.unapproved: tuple[str, ...] = ()
        self._to_ask: tuple[McpServerConfig, ...] = ()
        self.tools = self._start(settings, api_key, will_ask=will_ask)

    def _start(self, settings: Settings, api_key: str, *, will_ask: bool) -> McpTools | None:
        """Start the servers that may start (the person's, and the project's approved)."""
        if not settings.mcp_servers and not os.path.exists(self._project / ".mcp.json"):
            return None  # (seri.pure.mcp.mcp_startup.PROJECT_FILE: not imported without servers)
        from seri.runtime.mcp.mcp_tools import McpTools, start_plan

        plan = start_plan(self._store, settings, self._project)
        self.notes = plan.notices(will_ask=will_ask)
        self.unapproved = tuple(server.name for server in plan.unapproved)
        self._to_ask = plan.unapproved if will_ask else ()
        if not plan.start and not self._to_ask:
            return None
        return McpTools.start(plan, self._project, (api_key,))

    def ask(self, approve: ApproveServer) -> None:
        """Whether to start each project server not approved here (asked once); a yes is
        remembered for this project (as `seri mcp approve` does) and starts the server now,
        so the task can use it."""
        waiting, self._to_ask = self._to_ask, ()
        if not waiting or self.tools is None:
            return
        from seri.runtime.mcp.mcp_review import remember_approved, review_text

        chosen = [
            server
            for server in waiting
            if approve(server.name, review_text(server, self._store, self._project))
        ]
        if chosen:
            remember_approved(self._store, self._project, chosen)
            self.tools.add(tuple(chosen))
            started = {server.name for server in chosen}
            self.unapproved = tuple(n for n in self.unapproved if n not in started)

    def add(self, configs: tuple[McpServerConfig, ...], api_key: str) -> None:
        """Start these servers too, already trusted by the caller (ACP's client servers,
        approved as a project's are); added for seri acp."""
        if not configs:
            return
        if self.tools is None:
            from seri.runtime.mcp.mcp_tools import McpTools

            self.tools = McpTools(self._project, (api_key,))
        self.tools.add(configs)

    def offered(self) -> tuple[tuple[ToolSpec, ...], bool]:
        """The tools a task offers now (built-in, then those of servers up), and whether MCP
        tools go out by name only (then with tool_search)."""
        if self.tools is None:
            return PARENT_TOOLS, False
        found = self.tools.specs()
        deferred = should_defer(found, self._threshold)
        return (*PARENT_TOOLS, *found, *((TOOL_SEARCH,) if deferred else ())), deferred

    def ready_for_task(self, events: RunEvents) -> None:
        """Wait (boundedly) for the first servers, and record their state."""
        if self.tools is not None:
            self.tools.wait_first(self._wait, events)
            self.tools.tell(events)

    def statuses(self) -> tuple[McpServerStatus, ...]:
        return self.tools.statuses() if self.tools is not None else ()

    def close(self) -> None:
        if self.tools is not None:
            self.tools.close()
