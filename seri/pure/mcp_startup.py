"""Which MCP servers a chat starts: the person's own (config.json) always, a project's
(``.mcp.json``) only once approved for that project as it is now.

A repository is something one clones; its ``.mcp.json`` names programs. Starting them unasked
would let any repository run code on the machine, so each project server waits for ``seri mcp
approve`` (the approval is for its command and arguments, or URL: ``McpServerConfig.identity``).
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from seri.pure.mcp_config import McpServerConfig, McpServerSet, combine
from seri.pure.value_record import ValueRecord

APPROVE_COMMAND = "seri mcp approve"
# A project's servers, in Claude Code's file and shape.
PROJECT_FILE = ".mcp.json"


@attrs.frozen(repr=False, eq=False)
class StartPlan(ValueRecord):
    """The servers to start, the project servers waiting for approval (changed ones too), and
    each configuration problem as the sentence to show."""

    start: tuple[McpServerConfig, ...] = ()
    unapproved: tuple[McpServerConfig, ...] = ()
    problems: tuple[str, ...] = ()

    def notices(self, *, will_ask: bool = False) -> tuple[str, ...]:
        """What a person is told before the first prompt: problems, and the servers not
        started with the command that approves them (or, on a terminal, that seri will ask)."""
        lines = [f"seri: warning: {problem}" for problem in self.problems]
        if self.unapproved:
            quoted = ", ".join(repr(s.name) for s in self.unapproved)
            names = " ".join(server.name for server in self.unapproved)
            if will_ask:
                lines.append(
                    f"seri: this project's .mcp.json names MCP server(s) {quoted}, not approved "
                    "here yet: seri asks before your first task whether to start them"
                )
            else:
                lines.append(
                    f"seri: MCP server(s) {quoted} of this project's .mcp.json are not started: "
                    "a project's servers run only once approved; review them with `seri mcp "
                    f"list`, then run `{APPROVE_COMMAND} {names}`"
                )
        return tuple(lines)


def plan_start(user: McpServerSet, project: McpServerSet, approved: Mapping[str, str]) -> StartPlan:
    """``approved`` maps each server approved for this project to the identity it was
    approved as; a project server whose identity changed since is not approved."""
    servers = combine(user, project)
    from_project = set(project.names())
    start: list[McpServerConfig] = []
    waiting: list[McpServerConfig] = []
    for server in servers.servers:
        if server.name in from_project and approved.get(server.name) != server.identity():
            waiting.append(server)
        else:
            start.append(server)
    return StartPlan(
        start=tuple(start),
        unapproved=tuple(waiting),
        problems=tuple(problem.line() for problem in servers.problems),
    )
