"""A chat's MCP servers as tools: read the configuration, start the servers that may start in
the background, hand their tools to each task as records, run calls, and say what happened
(on stderr, and in the trajectory as ``mcp_server`` events of the run that noticed it).

The hub (``seri.io.mcp.mcp_hub``) is imported only when there is a server to start: a chat
without servers never loads it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seri.pure.agent.effects import ToolRun
from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import PROJECT_MCP_FILE, BoundedInputError
from seri.pure.mcp.mcp_config import (
    McpConfigProblem,
    McpServerConfig,
    McpServerSet,
    servers_from_document,
)
from seri.pure.mcp.mcp_startup import PROJECT_FILE, StartPlan, plan_start
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.tools.tool_definitions import (
    SERVER_DEFINITION_CHARS,
    servers_over_budget,
    unlisted_tools,
)
from seri.pure.tools.tool_specs import ToolSpec, mcp_spec
from seri.pure.trajectories.event_record import ABSENT
from seri.pure.trajectories.tool_events import McpServer

if TYPE_CHECKING:
    from seri.io.mcp.mcp_hub import McpHub
    from seri.io.mcp.mcp_server_status import McpEvent, McpServerStatus
    from seri.io.session.store import Store
    from seri.pure.inputs.settings import Settings
    from seri.pure.permissions.trust import ExpansionPolicy
    from seri.runtime.trajectories.run_events import RunEvents

__all__ = ["PROJECT_FILE", "McpTools", "say", "start_plan"]


def project_servers(project: Path, env: Mapping[str, str], policy: ExpansionPolicy) -> McpServerSet:
    """The servers of ``project``'s ``.mcp.json`` (none when it has no such file), read with
    the trust model's ``policy`` for a project's entries (``project_policy_of``)."""
    from seri.io.inputs.config import read_bounded_text

    path = project / PROJECT_FILE
    try:
        text = read_bounded_text(path, PROJECT_MCP_FILE)
    except FileNotFoundError:
        return McpServerSet()
    except BoundedInputError as exc:
        return _unusable(path, f"the file holds {exc.reason}; no server of it starts")
    except (OSError, UnicodeDecodeError) as exc:
        return _unusable(path, f"the file cannot be read ({exc})")
    try:
        document = json_text.loads_bounded(text, PROJECT_MCP_FILE)
    except BoundedInputError as exc:
        return _unusable(path, f"the file holds {exc.reason}; no server of it starts")
    except ValueError as exc:
        return _unusable(path, f"the file is not JSON ({exc}); no server of it starts")
    return servers_from_document(document, env, str(path), policy)


def project_policy_of(settings: Settings) -> ExpansionPolicy:
    """What a project's ``${VAR}`` may expand: no secret of the person's, unless config.json
    grants it to that server (seri.pure.permissions.trust)."""
    from seri.pure.permissions.trust import SERI_KEY_VARIABLES, project_policy

    keys = (os.environ.get(name, "") for name in SERI_KEY_VARIABLES)
    return project_policy(settings.mcp_project_secrets, [key for key in keys if key])


def _unusable(path: Path, why: str) -> McpServerSet:
    return McpServerSet(problems=(McpConfigProblem("*", str(path), why, whole_file=True),))


def expansion_env(project: Path) -> dict[str, str]:
    """The variables ``${VAR}`` in a server entry may name: the environment, and
    CLAUDE_PROJECT_DIR as Claude Code sets it (files written for it use it)."""
    return {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}


def start_plan(store: Store, settings: Settings, project: Path) -> StartPlan:
    from seri.io.mcp.mcp_approvals import approved_digests

    env = expansion_env(project)
    config_file = "config.json"
    user = servers_from_document({"mcpServers": dict(settings.mcp_servers)}, env, config_file)
    found = project_servers(project, env, project_policy_of(settings))
    approved = approved_digests(store, str(project)) if found.servers else {}
    return plan_start(user, found, approved)


class McpTools:
    """The running servers of one chat. Every method is safe to call at any time.

    Servers approved during the chat (asked before its first task) start in a hub of their
    own beside the first one; a name is never in two hubs (names are unique across them).
    """

    def __init__(self, project: Path, known_secrets: tuple[str, ...]) -> None:
        self.project = project
        self.known_secrets = known_secrets
        self.hubs: list[McpHub] = []
        self._waited: set[int] = set()
        # Servers already said to be over the definitions budget (said once a chat).
        self._over_budget: set[str] = set()

    @classmethod
    def start(cls, plan: StartPlan, project: Path, known_secrets: tuple[str, ...]) -> McpTools:
        tools = cls(project, known_secrets)
        tools.add(plan.start)
        return tools

    def add(self, configs: tuple[McpServerConfig, ...]) -> None:
        """Start these servers too, in the background."""
        from seri.io.mcp.mcp_hub import McpHub

        if not configs:
            return
        hub = McpHub(
            configs,
            parent_env=os.environ,
            project_dir=self.project,
            known_secrets=self.known_secrets,
        )
        hub.start()
        self.hubs.append(hub)

    def wait_first(self, bound: float, events: RunEvents) -> None:
        """Before the first model call (and the first after servers were added): wait for
        them up to ``bound`` seconds, once. Each server's state is recorded (up with its tools,
        failed, still starting); those that failed or are still starting are said on stderr
        (the call goes without them; a late one joins at a later task)."""
        for hub in self.hubs:
            if id(hub) in self._waited:
                continue
            self._waited.add(id(hub))
            for status in hub.wait_ready(bound):
                line = _start_notice(status, bound)
                say((line,) if line else ())
                events.record(_status_event(status, line))
        self._say_over_budget()

    def _say_over_budget(self) -> None:
        """Name each server whose tools would not fit a request whole (once a chat): what
        happens to them is not the person's AGENTS.md, nor a mystery."""
        specs = self.specs()
        left_out = unlisted_tools(specs)
        for server, size in servers_over_budget(specs).items():
            if server in self._over_budget:
                continue
            self._over_budget.add(server)
            count = sum(1 for spec in specs if spec.server == server)
            unlisted = len(left_out.get(server, ()))
            rest = f", and {unlisted:,} of them only through tool_search" if unlisted else ""
            say(
                (
                    f"seri: MCP server {server!r} offers {count:,} tools, about {size:,} "
                    f"characters of definitions, more than one server may add to a request "
                    f"({SERVER_DEFINITION_CHARS:,}): they go out by name and one line{rest}",
                )
            )

    def specs(self) -> tuple[ToolSpec, ...]:
        """The records of every tool of every server up now."""
        return tuple(
            mcp_spec(entry.name, entry.server, entry.tool)
            for hub in self.hubs
            for entry in hub.tools()
        )

    def tell(self, events: RunEvents) -> None:
        """What happened to the servers since last asked (late, restarted, gone, other
        tools): said on stderr and recorded in ``events``' run."""
        for hub in self.hubs:
            for event in hub.events():
                say((f"seri: {event.message}",))
                events.record(_life_event(event))
        self._say_over_budget()

    def run(
        self, name: str, arguments: Mapping[str, Any], max_chars: int | None, events: RunEvents
    ) -> ToolRun:
        hub = next(
            (h for h in self.hubs if any(entry.name == name for entry in h.tools())),
            self.hubs[0] if self.hubs else None,
        )
        if hub is None:
            return ToolRun(f"there is no MCP tool {name!r}; use another tool", is_error=True)
        cancel = threading.Event()
        try:
            outcome = hub.call(name, arguments, cancel=cancel, cap_chars=max_chars)
        except KeyboardInterrupt:
            cancel.set()
            return ToolRun("", is_error=True, interrupted=True)
        # A server that died on this call was restarted, or is gone: say so now, not at the
        # next task (a -p run has no next task).
        self.tell(events)
        return ToolRun(outcome.text, is_error=outcome.is_error)

    def statuses(self) -> tuple[McpServerStatus, ...]:
        return tuple(status for hub in self.hubs for status in hub.statuses())

    def close(self) -> None:
        for hub in self.hubs:
            hub.close()


def _start_notice(status: McpServerStatus, bound: float) -> str:
    if status.state == "starting":
        return (
            f"seri: MCP server {status.name!r} is still starting after {bound:g} s; "
            "going without its tools for now (they join when it is ready)"
        )
    if status.state == "failed":
        return f"seri: MCP server {status.name!r} did not start: {status.message}"
    return ""


def _status_event(status: McpServerStatus, notice: str) -> McpServer:
    """A server as the first wait left it: up (with its tools), failed, or still starting;
    ``notice`` is what stderr was told of it (nothing for a server that is up)."""
    detail = notice.removeprefix("seri: ") or ABSENT
    return McpServer(server=status.name, state=status.state, tools=status.tools, detail=detail)


def _life_event(event: McpEvent) -> McpServer:
    return McpServer(server=event.server, state=event.kind, tools=event.tools, detail=event.message)


def say(lines: tuple[str, ...]) -> None:
    for line in lines:
        print(neutralise(line), file=sys.stderr)
