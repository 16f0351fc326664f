"""MCP servers: list them with their state and tools, approve a project's servers.

Usage:
  seri mcp list [--json]
  seri mcp approve [<server>...]
  seri mcp revoke [<server>...]
  seri mcp (-h | --help)

Options:
  --json     One JSON object a line: name, state, source, transport, runs, approved, tools,
             message, digest, entry (and approved_entry, for one changed since
             approved; for a server that was started: era, protocol_version,
             server_name, server_version, startup_seconds, withheld_env).
  -h --help  Show this help.

Servers come from `mcpServers` in config.json (yours: they always start) and in the
project's .mcp.json (Claude Code's file and shape). A project's servers start only once
approved for that project: a cloned repository must not run programs unasked. `approve`
with no name approves every server of .mcp.json as it is now (an interactive `seri chat`
also asks, before its first task); the approval covers the whole entry (every field, as a
digest), so any change to it needs a new approval. A project entry named like one of
yours is ignored (yours starts) and cannot be approved. `revoke` withdraws approvals (all
of the project's when none is named). README: Trust.

`list` starts the servers that may start, waits up to 30 s for each, shows its state and
tools (named mcp__<server>__<tool>, as the model sees them), and stops them again; a
project server not approved is shown with its whole entry (secrets masked) and is not
run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from seri.pure.inputs.errors import EXIT_OK
from seri.runtime.agent.running import parse_usage
from seri.runtime.session.profile import current_project, open_profile


def run(argv: list[str]) -> int:
    options = parse_usage(__doc__ or "", argv)
    from seri.runtime.agent.running import load_settings_warned
    from seri.runtime.mcp import mcp_review
    from seri.runtime.terminal.chat_options import KEY_VARIABLES

    profile = open_profile()
    project = Path(current_project())
    if options["list"]:
        settings = load_settings_warned(profile.root)
        mcp_review.list_servers(
            profile.store,
            settings,
            project,
            tuple(os.environ[k] for k in KEY_VARIABLES if os.environ.get(k)),
            as_json=options["--json"],
        )
        return EXIT_OK
    if options["approve"]:
        settings = load_settings_warned(profile.root)
        lines = mcp_review.approve(profile.store, settings, project, options["<server>"])
    else:
        lines = mcp_review.revoke(profile.store, project, options["<server>"])
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_OK
