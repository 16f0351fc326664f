"""Which MCP servers a chat starts: the person's own (config.json) always, a project's
(``.mcp.json``) only once approved for that project as it is now.

A repository is something one clones; its ``.mcp.json`` names programs. Starting them unasked
would let any repository run code on the machine, so each project server waits for ``seri mcp
approve``. What an approval covers, and what a project entry may never do (hide one of the
person's servers by taking its name), is decided in ``seri.pure.permissions.trust``.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

import attrs

from seri.pure.mcp.mcp_config import McpServerConfig, McpServerSet, combine
from seri.pure.permissions.trust import APPROVED, NEW, conflict_warning, standing, why_waiting
from seri.pure.terminal.terminal_text import one_line

APPROVE_COMMAND = "seri mcp approve"
# A project's servers, in Claude Code's file and shape.
PROJECT_FILE = ".mcp.json"


@attrs.frozen
class StartPlan:
    """The servers to start, the project servers waiting for approval (changed ones too) with
    each one's standing (``seri.pure.permissions.trust``: never approved, changed, approved in the
    old form), the project entries refused for taking the name of one of the person's servers,
    and each configuration problem as the sentence to show."""

    start: tuple[McpServerConfig, ...] = ()
    unapproved: tuple[McpServerConfig, ...] = ()
    problems: tuple[str, ...] = ()
    states: tuple[tuple[str, str], ...] = ()
    conflicts: tuple[McpServerConfig, ...] = ()
    # Each name a project entry took from the person's servers, with the warning said.
    clashes: tuple[tuple[str, str], ...] = ()

    def state_of(self, name: str) -> str:
        return dict(self.states).get(name, NEW)

    def warnings(self) -> tuple[str, ...]:
        """The problems, and why each project server approved before no longer is."""
        return (
            *(f"seri: warning: {warning}" for _, warning in self.clashes),
            *(f"seri: warning: {problem}" for problem in self.problems),
            *(
                f"seri: {why_waiting(server.name, state)}"
                for server in self.unapproved
                if (state := self.state_of(server.name)) != NEW
            ),
        )

    def notices(self, *, will_ask: bool = False) -> tuple[str, ...]:
        """What a person is told before the first prompt: problems, and the servers not
        started with the command that approves them (or, on a terminal, that seri will ask)."""
        lines = list(self.warnings())
        if self.unapproved:
            quoted = ", ".join(repr(s.name) for s in self.unapproved)
            # Quoted as a shell takes them, on one line: a name is the project's text.
            names = one_line(" ".join(shlex.quote(server.name) for server in self.unapproved))
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
    """``approved`` maps each server approved for this project to the digest it was approved
    as; a project server whose entry changed since is not approved. The person's servers
    always start: a project entry of the same name (a server, a problem or a disabled one)
    is left out with a warning naming both."""
    project, conflicts, clashes = _without_conflicts(user, project)
    servers = combine(user, project)
    from_project = set(project.names())
    start: list[McpServerConfig] = []
    waiting: list[McpServerConfig] = []
    states: list[tuple[str, str]] = []
    for server in servers.servers:
        if server.name not in from_project:
            start.append(server)
            continue
        state = standing(server.digest, approved.get(server.name))
        if state == APPROVED:
            start.append(server)
        else:
            waiting.append(server)
            states.append((server.name, state))
    return StartPlan(
        start=tuple(start),
        unapproved=tuple(waiting),
        problems=tuple(problem.line() for problem in servers.problems),
        states=tuple(states),
        conflicts=conflicts,
        clashes=clashes,
    )


def _without_conflicts(
    user: McpServerSet, project: McpServerSet
) -> tuple[McpServerSet, tuple[McpServerConfig, ...], tuple[tuple[str, str], ...]]:
    """``project`` without the entries named like one of the person's servers, those entries,
    and a warning for each name."""
    mine = {server.name: server.source for server in user.servers}
    mine.update((name, "config.json") for name in user.disabled if name not in mine)
    mine.update((p.name, p.source) for p in user.problems if not p.whole_file)
    clashing = [
        *(server.name for server in project.servers),
        *(p.name for p in project.problems if not p.whole_file),
        *project.disabled,
    ]
    taken = [name for name in dict.fromkeys(clashing) if name in mine]
    if not taken:
        return project, (), ()
    sources = {server.name: server.source for server in project.servers}
    sources.update((p.name, p.source) for p in project.problems if not p.whole_file)
    warnings = tuple(
        (
            name,
            conflict_warning(name, mine[name] or "config.json", sources.get(name) or PROJECT_FILE),
        )
        for name in taken
    )
    kept = McpServerSet(
        servers=tuple(s for s in project.servers if s.name not in mine),
        problems=tuple(p for p in project.problems if p.whole_file or p.name not in mine),
        disabled=tuple(name for name in project.disabled if name not in mine),
    )
    conflicts = tuple(s for s in project.servers if s.name in mine)
    return kept, conflicts, warnings
