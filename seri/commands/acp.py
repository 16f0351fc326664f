"""Serve seri to an editor or a harness over the Agent Client Protocol (ACP v1).

Usage:
  seri acp
  seri acp (-h | --help)

Options:
  -h --help  Show this help.

The client (Zed, a JetBrains IDE, Neovim's CodeCompanion or avante, Harbor's acp agent,
acpx) starts `seri acp` and talks JSON-RPC with it, one message a line on stdin and stdout;
seri's notes and warnings go to stderr. Sessions are seri's own (seri.db): one started with
`seri chat` can be loaded in the editor and continued in the terminal again, under the same
leases, permission rules, sandbox, compaction and recording. README: seri acp.
"""

from __future__ import annotations

import os
import sys

from seri.runtime.agent.running import parse_usage


def run(argv: list[str]) -> int:
    if argv:  # docopt loads only to say what is wrong (or --help): initialize must be quick
        parse_usage(__doc__ or "", argv)
    from seri.runtime.acp.acp_agent import AcpAgent
    from seri.runtime.acp.acp_connection import Connection

    conn = Connection(sys.stdin.buffer, sys.stdout.buffer)
    # Nothing but the protocol may reach stdout: whatever else prints goes to stderr.
    sys.stdout = sys.stderr
    agent = AcpAgent(conn, dict(os.environ))
    conn.start(agent.on_cancel, agent.on_gone, agent.serve_now)
    agent.serve()
    return 0
