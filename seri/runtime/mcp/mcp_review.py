"""``seri mcp``: the servers a chat here would have, their state and tools, and the project
approvals that let a ``.mcp.json``'s servers start.

Every screen here shows a project's entry as the trust model has it
(``seri.pure.permissions.trust``): its digest and its masked form, every name and value made inert
and kept on its line.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from seri.io.mcp import mcp_approvals
from seri.io.session.store import Store
from seri.pure.inputs.errors import SeriError
from seri.pure.inputs.settings import Settings
from seri.pure.mcp.mcp_config import McpServerConfig
from seri.pure.mcp.mcp_startup import StartPlan
from seri.pure.permissions.trust import CONFLICT, SERI_KEY_VARIABLES, short_digest
from seri.pure.terminal.terminal_text import neutralise, one_line
from seri.pure.terminal.text_table import render_table
from seri.pure.trajectories.json_lines import json_line
from seri.pure.trajectories.redaction import Redactor, secrets_from_environment
from seri.runtime.extensions import approval_review
from seri.runtime.extensions.approval_review import MCP_SERVERS, Candidate
from seri.runtime.mcp.mcp_tools import (
    PROJECT_FILE,
    expansion_env,
    project_policy_of,
    project_servers,
    start_plan,
)

# How long `seri mcp list` waits for the servers it starts to answer.
LIST_WAIT_SECONDS = 30.0


def screen_redactor() -> Redactor:
    """What masks a value on a screen: the keys, every secret-looking variable's value, and
    the shapes of well-known secrets (what a granted ``${VAR}`` expanded to is one of them)."""
    keys = (os.environ.get(name, "") for name in SERI_KEY_VARIABLES)
    return Redactor.of((*keys, *secrets_from_environment(os.environ)))


def what_it_runs(server: McpServerConfig, redactor: Redactor | None = None) -> str:
    """The command line (or URL) the server is started with, secrets masked."""
    shown = server.url
    if server.transport == "stdio":
        shown = shlex.join((server.command, *server.args))
    return (redactor or screen_redactor()).text(shown)


def masked(server: McpServerConfig) -> str:
    """The entry as written, masked: by shape when it was read, and here also every value of
    the person's that is a secret (the key in a form no shape knows, pasted into the file)."""
    return screen_redactor().text(server.shown)


def review_text(server: McpServerConfig, store: Store, project: Path) -> str:
    """A project's server as a person reviews it before approving: what it runs, and the
    whole entry as written (every field, secrets masked) with its digest, and, when an
    earlier approval no longer holds, the entry as approved then; one line each."""
    lines = [
        f"This project's .mcp.json names MCP server {one_line(repr(server.name))}, which runs: "
        f"{one_line(what_it_runs(server))}",
        f"  entry ({short_digest(server.digest)}): {one_line(masked(server))}",
    ]
    before = mcp_approvals.approved_shown(store, str(project)).get(server.name, "")
    if before:
        lines.append(f"  approved as: {one_line(before)}")
    return "\n".join(lines)


def list_servers(
    store: Store,
    settings: Settings,
    project: Path,
    secrets: tuple[str, ...],
    *,
    as_json: bool,
) -> None:
    """Every server of config.json and this project's .mcp.json: those that may start are
    started (and stopped again) to show their state and tools; the others are not run."""
    plan = start_plan(store, settings, project)
    for line in plan.warnings():
        print(neutralise(line), file=sys.stderr)
    rows = _rows(store, plan, project, secrets)
    if as_json:
        for row in rows:
            sys.stdout.write(json_line(row, compact=False))
        return
    if not rows:
        print(
            f"No MCP servers: none in config.json's mcpServers or {project / PROJECT_FILE}.",
            file=sys.stderr,
        )
        return
    table = [
        [
            row["name"],
            row["state"],
            "user" if row["source"] == "config.json" else "project",
            str(len(row["tools"])),
            " ".join(row["runs"].split())[:60],
        ]
        for row in rows
    ]
    sys.stdout.write(render_table(["NAME", "STATE", "FROM", "TOOLS", "RUNS"], table) + "\n")
    for row in rows:
        name = one_line(row["name"])
        if row["tools"]:
            print(f"{name}: {one_line(', '.join(row['tools']))}")
        if not row["approved"]:
            print(f"{name}: entry ({short_digest(row['digest'])}): {one_line(row['entry'])}")
        if row.get("approved_entry"):
            print(f"{name}: approved as: {one_line(row['approved_entry'])}")
        if row["message"]:
            print(f"{name}: {one_line(row['message'])}", file=sys.stderr)


def _rows(
    store: Store, plan: StartPlan, project: Path, secrets: tuple[str, ...]
) -> list[dict[str, Any]]:
    redactor = Redactor.of((*secrets, *secrets_from_environment(os.environ)))
    rows: list[dict[str, Any]] = []
    if plan.start:
        from seri.io.mcp.mcp_hub import McpHub

        with McpHub(
            plan.start,
            parent_env=os.environ,
            project_dir=project,
            known_secrets=secrets,
        ) as hub:
            statuses = {status.name: status for status in hub.wait_ready(LIST_WAIT_SECONDS)}
            tools: dict[str, list[str]] = {}
            for entry in hub.tools():
                tools.setdefault(entry.server, []).append(entry.name)
        for server in plan.start:
            status = statuses[server.name]
            row = _row(server, status.state, redactor, approved=True)
            row.update(
                tools=tools.get(server.name, []),
                message=redactor.text(status.message),
                era=status.era or None,
                protocol_version=status.version or None,
                server_name=status.server_name or None,
                server_version=status.server_version or None,
                startup_seconds=status.startup_seconds,
                withheld_env=list(status.withheld),
            )
            rows.append(row)
    before = mcp_approvals.approved_shown(store, str(project)) if plan.unapproved else {}
    for server in plan.unapproved:
        row = _row(server, plan.state_of(server.name), redactor, approved=False)
        row["message"] = f"approve with: seri mcp approve {server.name}"
        if before.get(server.name):
            row["approved_entry"] = before[server.name]
        rows.append(row)
    for server in plan.conflicts:
        row = _row(server, CONFLICT, redactor, approved=False)
        row["message"] = (
            f"ignored: your config.json names a server {server.name!r} too, and yours starts; "
            f"rename this one in {PROJECT_FILE} to use it"
        )
        rows.append(row)
    return rows


def _row(
    server: McpServerConfig, state: str, redactor: Redactor, *, approved: bool
) -> dict[str, Any]:
    return {
        "name": server.name,
        "state": state,
        "source": server.source,
        "transport": server.transport,
        "runs": what_it_runs(server, redactor),
        "approved": approved,
        "tools": [],
        "message": "",
        "digest": server.digest,
        "entry": redactor.text(server.shown),
    }


def approve(store: Store, settings: Settings, project: Path, names: list[str]) -> list[str]:
    """Approve the named servers of this project's .mcp.json (all when none is named), as they
    are now; the lines to show. A server named like one of the person's own is not approved
    (theirs is the one that starts), nor is an entry that is a problem."""
    plan = start_plan(store, settings, project)
    found = project_servers(project, expansion_env(project), project_policy_of(settings))
    mine = dict(plan.clashes)
    problems = {p.name: p.line() for p in found.problems if not p.whole_file and p.name not in mine}
    servers = tuple(s for s in found.servers if s.name not in mine)
    for name in names:
        if name in mine:
            raise SeriError(
                f"MCP server {name!r} of {project / PROJECT_FILE} has the name of one of yours "
                f"(config.json), which is the one that starts; rename it in {PROJECT_FILE} to "
                "approve it"
            )
        if name in problems:
            raise SeriError(problems[name])
    left = () if names else (*problems.values(), *mine.values())
    chosen = _chosen(servers, names, project) if servers or not left else ()
    candidates = _candidates(chosen)
    approval_review.record(store, project, MCP_SERVERS, candidates)
    return [
        *approval_review.approved_lines(project, MCP_SERVERS, candidates),
        *(f"seri: not approved: {one_line(line)}" for line in left),
    ]


def remember_approved(store: Store, project: Path, servers: Iterable[McpServerConfig]) -> None:
    """Approve these servers for ``project``, as they are now (their whole entry's digest,
    and its masked form)."""
    approval_review.record(store, project, MCP_SERVERS, _candidates(servers))


def _candidates(servers: Iterable[McpServerConfig]) -> list[Candidate]:
    return [
        Candidate(s.name, s.digest, masked(s), what_it_runs(s), entry=masked(s)) for s in servers
    ]


def revoke(store: Store, project: Path, names: list[str]) -> list[str]:
    """Withdraw approvals (all of this project's when none is named)."""
    return approval_review.revoke(store, project, MCP_SERVERS, names)


def _chosen(
    servers: tuple[McpServerConfig, ...], names: list[str], project: Path
) -> tuple[McpServerConfig, ...]:
    if not servers:
        raise SeriError(f"{project / PROJECT_FILE} names no MCP server to approve")
    if not names:
        return servers
    by_name = {server.name: server for server in servers}
    unknown = [name for name in names if name not in by_name]
    if unknown:
        raise SeriError(
            f"{project / PROJECT_FILE} has no MCP server {', '.join(map(repr, unknown))}; "
            f"its servers are {', '.join(map(repr, by_name))}"
        )
    return tuple(by_name[name] for name in dict.fromkeys(names))
