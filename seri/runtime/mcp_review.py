"""``seri mcp``: the servers a chat here would have, their state and tools, and the project
approvals that let a ``.mcp.json``'s servers start."""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from seri.io import mcp_approvals
from seri.io.store import Store
from seri.pure.errors import SeriError
from seri.pure.json_lines import json_line
from seri.pure.mcp_config import McpServerConfig
from seri.pure.mcp_startup import StartPlan
from seri.pure.settings import Settings
from seri.pure.terminal_text import neutralise
from seri.pure.text_table import render_table
from seri.runtime.mcp_tools import PROJECT_FILE, expansion_env, project_servers, start_plan

# How long `seri mcp list` waits for the servers it starts to answer.
LIST_WAIT_SECONDS = 30.0


def what_it_runs(server: McpServerConfig) -> str:
    if server.transport == "stdio":
        return shlex.join((server.command, *server.args))
    return server.url


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
    for line in plan.notices()[: len(plan.problems)]:
        print(neutralise(line), file=sys.stderr)
    rows = _rows(plan, project, secrets)
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
        if row["tools"]:
            print(f"{row['name']}: {', '.join(row['tools'])}")
        if row["message"]:
            print(f"{row['name']}: {neutralise(row['message'])}", file=sys.stderr)


def _rows(plan: StartPlan, project: Path, secrets: tuple[str, ...]) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for server in plan.unapproved:
        rows[server.name] = _row(server, "not approved", approved=False)
    if plan.start:
        from seri.io.mcp_hub import McpHub

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
            row = _row(server, status.state, approved=True)
            row.update(
                tools=tools.get(server.name, []),
                message=status.message,
                era=status.era or None,
                protocol_version=status.version or None,
                server_name=status.server_name or None,
                server_version=status.server_version or None,
                startup_seconds=status.startup_seconds,
                withheld_env=list(status.withheld),
            )
            rows[server.name] = row
    order = [s.name for s in (*plan.start, *plan.unapproved)]
    return [rows[name] for name in order]


def _row(server: McpServerConfig, state: str, *, approved: bool) -> dict[str, Any]:
    return {
        "name": server.name,
        "state": state,
        "source": server.source,
        "transport": server.transport,
        "runs": what_it_runs(server),
        "approved": approved,
        "tools": [],
        "message": "" if approved else f"approve with: seri mcp approve {server.name}",
    }


def approve(store: Store, project: Path, names: list[str]) -> list[str]:
    """Approve the named servers of this project's .mcp.json (all when none is named), as they
    are now; the lines to show."""
    found = project_servers(project, expansion_env(project))
    chosen = _chosen(found.servers, names, project)
    remember_approved(store, project, chosen)
    return [f"Approved MCP server {s.name!r} for {project}: {what_it_runs(s)}" for s in chosen]


def remember_approved(store: Store, project: Path, servers: Iterable[McpServerConfig]) -> None:
    """Approve these servers for ``project``, as they are now (their identity)."""
    mcp_approvals.approve(
        store, str(project), ((s.name, s.identity()) for s in servers), time.time()
    )


def revoke(store: Store, project: Path, names: list[str]) -> list[str]:
    """Withdraw approvals (all of this project's when none is named)."""
    approved = mcp_approvals.approved_identities(store, str(project))
    chosen = names or sorted(approved)
    unknown = [name for name in chosen if name not in approved]
    if unknown:
        raise SeriError(
            f"no approved MCP server {', '.join(map(repr, unknown))} in {project}; "
            "seri mcp list shows them"
        )
    mcp_approvals.revoke(store, str(project), chosen)
    return [f"Revoked the approval of MCP server {name!r} for {project}." for name in chosen]


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
            f"its servers are {', '.join(by_name)}"
        )
    return tuple(by_name[name] for name in dict.fromkeys(names))
