"""MCP server life in the trajectory (`mcp_server` events), with real servers and `seri chat -p`.

One run holds every kind a person is told of on stderr: the filesystem server up with its
tools, a server that could not start (its stderr names the API key: redacted like every
event), and the filesystem server killed with kill -9, restarted once, killed again and gone.
The stderr lines are the ones seri always said; the trajectory now keeps them too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.mcp.install import Servers
from tests.mcp.test_chat_with_servers import (
    KEY,
    killed_twice,
    run_killed_twice,
    tool_names,
    write_config,
)


def mcp_events(run_seri: RunSeri) -> list[dict[str, Any]]:
    exported = run_seri("trajectory", "export")
    assert exported.returncode == 0, exported.stderr
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    return [row for row in rows if row["type"] == "mcp_server"]


def test_started_failed_restarted_and_gone_servers_are_recorded(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    # Its stderr names the API key: the notice of its death quotes the stderr's end.
    fs, script = killed_twice(project, mcp_servers, before=f"echo 'licensed to {KEY}' >&2; ")
    write_config(
        seri_home, mcpServers={"fs": fs, "broken": {"command": "sh", "args": ["-c", "exit 3"]}}
    )
    with FakeModel(script) as fake:
        result = run_killed_twice(run_seri, fake)
        offered = [name for name in tool_names(fake.requests[0]) if name.startswith("mcp__fs__")]
    assert result.returncode == 0, result.stderr
    events = mcp_events(run_seri)
    by_state = {(e["server"], e["state"]): e for e in events}
    # Up, with the tools the first request offered.
    assert by_state["fs", "ready"]["tools"] == len(offered) > 0
    assert "detail" not in by_state["fs", "ready"]
    # Could not start: said on stderr, and recorded in the same words.
    failed = by_state["broken", "failed"]
    assert failed["tools"] == 0
    assert failed["detail"].startswith("MCP server 'broken' did not start")
    assert f"seri: {failed['detail']}" in result.stderr
    # Killed: restarted once with its tools; killed again: gone.
    states = [e["state"] for e in events if e["server"] == "fs"]
    assert states[0] == "ready" and states[-1] == "gone", states
    assert states.index("restarting") < states.index("gone"), states
    restarting = by_state["fs", "restarting"]
    assert restarting["detail"].startswith("MCP server 'fs' stopped (")
    assert "licensed to [REDACTED]" in restarting["detail"]
    assert f"seri: {restarting['detail']}" in result.stderr
    if "restarted" in states:
        assert by_state["fs", "restarted"]["tools"] == len(offered)
    gone = by_state["fs", "gone"]
    assert gone["tools"] == 0 and "its tools are gone for this session" in gone["detail"]
    # Every event line of stderr is in the trajectory, and nothing else was added to stderr.
    said = [f"seri: {e['detail']}" for e in events if "detail" in e]
    assert all(line in result.stderr for line in said), said
    assert result.stderr.count("seri: MCP server") == len(said)
    assert KEY not in (seri_home / "seri.db").read_bytes().decode("utf-8", "replace")
    # The other exports keep them: OTLP as events of the tool span the call that noticed
    # the death was in (that span stays whole); ATIF with that call's result.
    otlp = run_seri("trajectory", "export", "--format", "otlp")
    assert otlp.returncode == 0, otlp.stderr
    spans = [
        span
        for line in otlp.stdout.splitlines()
        for resource in json.loads(line).get("resourceSpans", [])
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
    ]
    noticed = [
        span["name"]
        for span in spans
        for event in span.get("events", [])
        if event["name"] == "seri.mcp_server"
    ]
    assert "execute_tool mcp__fs__read_text_file" in noticed, noticed
    reads = [s for s in spans if s["name"] == "execute_tool mcp__fs__read_text_file"]
    assert len(reads) == 5  # c1, c3, c4, c6, c7: none cut short by the event inside it
    atif = run_seri("trajectory", "export", "--format", "atif")
    assert atif.returncode == 0, atif.stderr
    assert '"mcp_server":[{"server":"fs","state":"restarting"' in atif.stdout
    assert f"MCP server 'fs' is ready, with {len(offered)} tool(s)" in atif.stdout
