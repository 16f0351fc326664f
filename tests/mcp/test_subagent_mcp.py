"""A subagent (the `task` tool's child) uses the parent's MCP servers, under the parent's rules.

The real filesystem MCP server (tests/mcp/install.py) serves the chat; the scripted model
plays the parent and, inside the parent's `task` call, the child. The child is offered the
server's tools the parent's policy allows without asking (read_text_file is marked
read-only; write_file only when a rule or an "always" allows it), its calls run on the
parent's server, and they are recorded in the child's part of the run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from seri.runtime.agent.subagent import CHILD_PREAMBLE
from tests.conftest import RunSeri
from tests.mcp.install import Servers
from tests.mcp.test_chat_with_servers import (
    answer_always_once,
    call,
    chat_env,
    tool_names,
    tool_results,
    write_config,
)


def _task(prompt: str) -> dict[str, Any]:
    return {"tool_calls": [call("t1", "task", description="use the server", prompt=prompt)]}


def _is_child(body: dict[str, Any]) -> bool:
    return CHILD_PREAMBLE in body["messages"][0]["content"]


def _fs_config(seri_home: Path, servers: Servers, project: Path) -> None:
    fs = {"command": str(servers.filesystem), "args": [str(project)]}
    write_config(seri_home, mcpServers={"fs": fs})


def test_a_child_reads_through_the_parents_server_and_may_not_write_unasked(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    _fs_config(seri_home, mcp_servers, project)
    (project / "note.txt").write_text("the child read this\n")
    written = project / "child.txt"
    script: list[dict[str, Any]] = [
        _task("Read note.txt through the server."),
        {"tool_calls": [call("c1", "mcp__fs__read_text_file", path=str(project / "note.txt"))]},
        {"tool_calls": [call("c2", "mcp__fs__write_file", path=str(written), content="x")]},
        {"text": "It says: the child read this"},
        {"text": "The note says the child read this."},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "task", "-p", "delegate", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The note says the child read this.\n"
    assert [_is_child(body) for body in requests] == [False, True, True, True, False]
    offered = tool_names(requests[1])
    # The same rules as the parent: read-only tools unasked; write_file asks, so no child
    # (who has no one to ask) is offered it, and a call of it is not run.
    assert "mcp__fs__read_text_file" in offered
    assert "mcp__fs__write_file" not in offered and "task" not in offered
    read, refused = tool_results(requests[3])
    assert read == "the child read this\n"
    assert refused.startswith("not run: unknown tool 'mcp__fs__write_file'")
    assert not written.exists()
    # Recorded in the child's part of the parent's run, and stored in the child's session.
    exported = run_seri("trajectory", "export")
    rows = [json.loads(line) for line in exported.stdout.splitlines()]
    types = [(row["type"], row.get("name", "")) for row in rows]
    start = types.index(("subagent_start", ""))
    end = types.index(("subagent_end", ""))
    assert start < types.index(("tool_call", "mcp__fs__read_text_file")) < end
    [child] = [row["child"] for row in rows if row["type"] == "subagent_start"]
    shown = run_seri("sessions", "show", child, "--json")
    stored = [json.loads(line) for line in shown.stdout.splitlines()[1:]]
    assert any(
        row.get("role") == "tool" and row.get("text") == "the child read this\n" for row in stored
    )


def test_an_always_the_person_gave_in_the_task_covers_the_child_it_starts(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    _fs_config(seri_home, mcp_servers, project)
    first, second = project / "parent.txt", project / "child.txt"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "mcp__fs__write_file", path=str(first), content="p")]},
        _task("Write child.txt through the server."),
        {"tool_calls": [call("w2", "mcp__fs__write_file", path=str(second), content="c")]},
        {"text": "written"},
        {"text": "both written"},
    ]
    with FakeModel(script) as fake:
        asked, output, requests = answer_always_once(
            ["chat", "--allow", "task"], project, seri_home, fake
        )
    assert "2 always: mcp__fs__write_file for this session" in asked
    # Asked once, for the parent's call; the child's ran under the rule the answer made.
    assert output.count("allow? [1] ") == 1
    child_first = next(body for body in requests if _is_child(body))
    assert "mcp__fs__write_file" in tool_names(child_first)
    assert first.read_text() == "p" and second.read_text() == "c"
