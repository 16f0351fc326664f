"""MCP servers as a person uses them: the installed `seri`, a real server from .cache/mcp, and a
scripted model on loopback calling the server's tools through `seri chat -p`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.mcp.conftest import HOSTILE
from tests.mcp.install import Servers

KEY = "sk-or-v1-" + "cd34" * 16


def chat_env(fake: FakeModel) -> dict[str, str]:
    return {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def write_mcp_json(project: Path, servers: dict[str, Any]) -> None:
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def write_config(seri_home: Path, **document: Any) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps(document))


def filesystem(servers: Servers, project: Path) -> dict[str, Any]:
    """Claude Code's shape for the filesystem server, rooted at the project."""
    return {"command": str(servers.filesystem), "args": [str(project)]}


def tool_names(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def tool_results(body: dict[str, Any]) -> list[str]:
    found = []
    for message in body["messages"]:
        if message["role"] != "tool":
            continue
        content = message["content"]
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        found.append(content)
    return found


def chat(
    run_seri: RunSeri, script: list[dict[str, Any]], *args: str, timeout: float = 60
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """`seri chat ARGS... -p go` against a model following ``script``: the run, the requests."""
    with FakeModel(script) as fake:
        result = run_seri("chat", *args, "-p", "go", env=chat_env(fake), timeout=timeout)
        return result, fake.requests


def reading(path: Path, answer: str) -> list[dict[str, Any]]:
    """A model that reads ``path`` with the filesystem server's tool, then answers."""
    return [
        {"tool_calls": [call("c1", "mcp__fs__read_text_file", path=str(path))]},
        {"text": answer},
    ]


def stored_tool_texts(run_seri: RunSeri) -> list[str]:
    listed = run_seri("sessions", "list", "--json")
    session = json.loads(listed.stdout.splitlines()[0])["id"]
    shown = run_seri("sessions", "show", session, "--json")
    texts = []
    for line in shown.stdout.splitlines():
        row = json.loads(line)
        if row.get("role") == "tool":
            texts.append(row.get("text", ""))
    return texts


def killed_twice(
    project: Path, servers: Servers, *, before: str = ""
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The filesystem server behind a shell that notes its pid (running ``before`` first), and
    a model that reads note.txt through it, kills it with kill -9, reads twice, kills it
    again and reads twice more: c1, c3, c4, c6 and c7 are the reads."""
    (project / "note.txt").write_text("alive\n")
    pid_file = project / "server.pid"
    wrapper = f"{before}echo $$ > {pid_file}; exec {servers.filesystem} {project}"
    read = {"path": str(project / "note.txt")}
    kill = f"kill -9 $(cat {pid_file})"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("c1", "mcp__fs__read_text_file", **read)]},
        {"tool_calls": [call("c2", "bash", command=kill)]},
        {"tool_calls": [call("c3", "mcp__fs__read_text_file", **read)]},
        {"tool_calls": [call("c4", "mcp__fs__read_text_file", **read)]},
        {"tool_calls": [call("c5", "bash", command=kill)]},
        {"tool_calls": [call("c6", "mcp__fs__read_text_file", **read)]},
        {"tool_calls": [call("c7", "mcp__fs__read_text_file", **read)]},
        {"text": "done"},
    ]
    return {"command": "sh", "args": ["-c", wrapper]}, script


def _unsandboxed(env: dict[str, str]) -> dict[str, str]:
    """The model's bash kills the server (seri's child) only without the OS sandbox: under
    it, seri's processes are out of a command's reach (README: Sandbox)."""
    return {**env, "SERI_SANDBOX": "none"}


def run_killed_twice(run_seri: RunSeri, fake: FakeModel) -> subprocess.CompletedProcess[str]:
    """`seri chat -p` playing ``killed_twice``'s script from ``fake``: bash allowed (it does
    the killing), without the OS sandbox."""
    return run_seri(
        "chat", "--allow", "bash", "-p", "read twice", env=_unsandboxed(chat_env(fake)), timeout=120
    )


def answer_always_once(
    argv: list[str], project: Path, seri_home: Path, fake: FakeModel
) -> tuple[str, str, list[dict[str, Any]]]:
    """`seri ARGV` on a terminal: one task, whose one question is answered "always", then
    /exit. What the question showed, the whole output, and the model's requests."""
    from tests.e2e.test_interactive import PROMPT, Terminal, _terminal_env

    term = Terminal(argv, project, _terminal_env(seri_home, fake))
    term.expect(PROMPT)
    term.type("write two files")
    asked = term.expect("allow? [1] ")
    term.type("always")
    term.expect(PROMPT)
    term.type("/exit")
    status = term.wait()
    assert status == 0, term.output
    return asked, term.output, fake.requests


def test_a_scripted_model_reads_a_file_through_the_real_filesystem_server(
    run_seri: RunSeri, project: Path, mcp_servers: Servers
) -> None:
    (project / "note.txt").write_text("the secret of the garden\n")
    write_mcp_json(project, {"fs": filesystem(mcp_servers, project)})
    approved = run_seri("mcp", "approve")
    assert approved.returncode == 0, approved.stderr
    assert "Approved MCP server 'fs'" in approved.stderr
    result, requests = chat(run_seri, reading(project / "note.txt", "It says so."))
    assert result.returncode == 0, result.stderr
    assert len(requests) == 2
    first = requests[0]
    assert "mcp__fs__read_text_file" in tool_names(first)
    schema = next(
        t["function"]["parameters"]
        for t in first["tools"]
        if t["function"]["name"] == "mcp__fs__read_text_file"
    )
    assert "path" in schema["properties"]
    # Allowed without asking: the server marks it readOnlyHint.
    assert tool_results(requests[1]) == ["the secret of the garden\n"]
    assert "the secret of the garden\n" in stored_tool_texts(run_seri)


def test_an_unapproved_project_server_is_not_started_and_is_named_with_the_fix(
    run_seri: RunSeri, project: Path, tmp_path: Path
) -> None:
    """Single: refused before any process starts (tests/mcp/test_trust_model.py says why)."""
    marker = tmp_path / "started"
    write_mcp_json(
        project,
        {"cloned": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}},
    )
    with FakeModel([{"text": "hi"}]) as fake:
        result = run_seri("chat", "-p", "hello", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert "'cloned'" in result.stderr and "seri mcp approve cloned" in result.stderr
    assert not any(name.startswith("mcp__") for name in tool_names(requests[0]))
    time.sleep(0.2)
    assert not marker.exists()
    listed = run_seri("mcp", "list", "--json")
    row = json.loads(listed.stdout)
    assert (row["name"], row["state"], row["approved"]) == ("cloned", "not approved", False)
    assert not marker.exists()


def test_an_approval_holds_for_the_command_approved_not_a_changed_one(
    run_seri: RunSeri, project: Path, mcp_servers: Servers
) -> None:
    write_mcp_json(project, {"fs": filesystem(mcp_servers, project)})
    assert run_seri("mcp", "approve", "fs").returncode == 0
    first = json.loads(run_seri("mcp", "list", "--json").stdout)
    assert first["state"] == "ready" and "mcp__fs__read_text_file" in first["tools"]
    changed = filesystem(mcp_servers, project)
    changed["args"] = ["/"]
    write_mcp_json(project, {"fs": changed})
    second = json.loads(run_seri("mcp", "list", "--json").stdout)
    assert (second["state"], second["tools"]) == ("changed since approved", [])
    unknown = run_seri("mcp", "approve", "nope")
    assert unknown.returncode == 2 and "has no MCP server 'nope'" in unknown.stderr
    assert run_seri("mcp", "revoke").returncode == 0


def test_in_p_mode_a_tool_needing_approval_is_denied_with_a_reason_and_a_rule_allows_it(
    run_seri: RunSeri, project: Path, mcp_servers: Servers
) -> None:
    write_mcp_json(project, {"fs": filesystem(mcp_servers, project)})
    run_seri("mcp", "approve")
    target = project / "made.txt"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("c1", "mcp__fs__write_file", path=str(target), content="x")]},
        {"text": "could not"},
    ]
    with FakeModel(script) as fake:
        denied = run_seri("chat", "-p", "write", env=chat_env(fake))
        requests = fake.requests
    assert denied.returncode == 0, denied.stderr
    [reason] = tool_results(requests[1])
    assert reason.startswith("denied by policy: mcp__fs__write_file needs approval")
    assert "no one can be asked" in reason
    assert not target.exists()
    with FakeModel(script) as fake:
        allowed = run_seri("chat", "--allow", "mcp__fs__*", "-p", "write", env=chat_env(fake))
        requests = fake.requests
    assert allowed.returncode == 0, allowed.stderr
    assert target.read_text() == "x"
    assert "Successfully wrote" in tool_results(requests[1])[0]


def test_a_deny_rule_by_server_prefix_beats_read_only(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    write_config(
        seri_home,
        permissions={"deny": ["mcp__fs"]},
        mcpServers={"fs": filesystem(mcp_servers, project)},
    )
    (project / "note.txt").write_text("hidden\n")
    result, requests = chat(run_seri, reading(project / "note.txt", "denied"))
    # A server of config.json is the person's own: it starts without a project approval.
    assert "mcp__fs__read_text_file" in tool_names(requests[0])
    assert tool_results(requests[1]) == [
        "denied by rule mcp__fs: mcp__fs__read_text_file denied by rule mcp__fs"
    ]
    assert result.returncode == 0


def test_with_many_tools_only_names_go_out_and_tool_search_returns_the_schema(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    write_config(
        seri_home,
        mcp={"tool_search_threshold": 3},
        mcpServers={"fs": filesystem(mcp_servers, project)},
    )
    (project / "note.txt").write_text("found it\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("c1", "tool_search", query="read text file contents")]},
        {"tool_calls": [call("c2", "mcp__fs__read_text_file", path=str(project / "note.txt"))]},
        {"text": "ok"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "-p", "read note", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    tools = {t["function"]["name"]: t["function"] for t in requests[0]["tools"]}
    assert "tool_search" in tools and "read_file" in tools
    brief = tools["mcp__fs__read_text_file"]
    assert brief["parameters"] == {"type": "object"}
    assert "tool_search" in brief["description"]
    found = json.loads(tool_results(requests[1])[0])
    full = next(t for t in found if t["name"] == "mcp__fs__read_text_file")
    assert "path" in full["parameters"]["properties"]
    assert tool_results(requests[2])[1] == "found it\n"
    # A tool by name costs the window less than its whole definition.
    assert len(json.dumps(brief)) < len(json.dumps(full))


def test_a_server_that_hangs_at_start_is_left_behind_within_the_bound(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    silent = {"command": sys.executable, "args": [str(HOSTILE), "--mode", "silent"]}
    write_config(seri_home, mcp={"startup_wait": 1}, mcpServers={"stuck": silent})
    with FakeModel([{"text": "went ahead"}]) as fake:
        started = time.monotonic()
        result = run_seri("chat", "-p", "hello", env=chat_env(fake))
        took = time.monotonic() - started
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "went ahead\n"
    assert "MCP server 'stuck' is still starting after 1 s" in result.stderr
    assert "going without its tools" in result.stderr
    assert not any(name.startswith("mcp__") for name in tool_names(requests[0]))
    assert took < 8, took


def test_a_server_killed_mid_session_is_restarted_once_then_its_tools_are_gone(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    fs, script = killed_twice(project, mcp_servers)
    write_config(seri_home, mcpServers={"fs": fs})
    with FakeModel(script) as fake:
        result = run_killed_twice(run_seri, fake)
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    results = tool_results(requests[-1])
    assert results[0] == "alive\n"
    # The first death: restarted once. The call after it runs on the new process (or, if it
    # came before seri noticed, says the server is starting again and was not repeated).
    assert results[2] == "alive\n" or "starting MCP server 'fs' again" in results[2]
    assert results[3] == "alive\n"
    # The second: no more restarts; its tools are gone, and the model is told to do without.
    assert "its tools are gone" in results[5] or "use another tool" in results[5], results[5]
    assert "use another tool" in results[6], results[6]
    assert "MCP server 'fs' stopped (" in result.stderr
    assert "restarting it once" in result.stderr
    assert "its tools are gone for this session" in result.stderr


def test_a_result_holding_the_api_key_is_redacted_before_the_model_or_the_store_sees_it(
    run_seri: RunSeri, project: Path, mcp_servers: Servers
) -> None:
    write_mcp_json(project, {"everything": {"command": str(mcp_servers.everything)}})
    run_seri("mcp", "approve", "everything")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("c1", "mcp__everything__echo", message=f"key={KEY}")]},
        {"tool_calls": [call("c2", "mcp__everything__echo", colour="red")]},
        {"text": "ok"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat", "--allow", "mcp__everything__echo", "-p", "echo", env=chat_env(fake)
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    echoed, refused = tool_results(requests[2])
    assert echoed.startswith("Echo: key=") and KEY not in echoed
    # Arguments the server's schema does not take never reach it: a tool error to act on.
    assert refused.startswith("not run: mcp__everything__echo is missing required parameter")
    assert all(KEY not in text for text in stored_tool_texts(run_seri))


def test_on_a_terminal_a_servers_tool_is_asked_with_its_arguments_and_always_stops_asking(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path
) -> None:
    write_mcp_json(project, {"fs": filesystem(mcp_servers, project)})
    run_seri("mcp", "approve")
    first, second = project / "one.txt", project / "two.txt"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "mcp__fs__write_file", path=str(first), content="1")]},
        {"tool_calls": [call("w2", "mcp__fs__write_file", path=str(second), content="2")]},
        {"text": "both written"},
    ]
    with FakeModel(script) as fake:
        asked, output, _ = answer_always_once(["chat"], project, seri_home, fake)
    assert "? mcp__fs__write_file" in asked
    assert f'"path": "{first}"' in asked and '"content": "1"' in asked
    assert "2 always: mcp__fs__write_file for this session" in asked
    assert output.count("allow? [1] ") == 1
    assert first.read_text() == "1" and second.read_text() == "2"


def test_slash_mcp_shows_the_servers_of_the_chat_and_those_waiting_for_approval(
    run_seri: RunSeri, project: Path, mcp_servers: Servers
) -> None:
    write_mcp_json(
        project,
        {"fs": filesystem(mcp_servers, project), "other": {"command": "never-started"}},
    )
    run_seri("mcp", "approve", "fs")
    with FakeModel([{"text": "hi"}]) as fake:
        result = run_seri("chat", input="hello\n/mcp\n", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    shown = result.stdout + result.stderr
    assert re.search(r"fs\s+ready\s+14 tools", shown), shown
    assert re.search(r"other\s+not approved \(seri mcp approve other", shown), shown


def test_a_chat_uses_a_server_over_http_and_one_of_the_2026_era_side_by_side(
    run_seri: RunSeri,
    project: Path,
    mcp_servers: Servers,
    everything_http: str,
    git_repo: Path,
) -> None:
    write_mcp_json(
        project,
        {
            "web": {"type": "http", "url": everything_http},
            "git": {"command": str(mcp_servers.git), "args": ["--repository", str(git_repo)]},
        },
    )
    run_seri("mcp", "approve")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("c1", "mcp__web__echo", message="over http"),
                call("c2", "mcp__git__git_status", repo_path=str(git_repo)),
            ]
        },
        {"text": "ok"},
    ]
    result, requests = chat(run_seri, script, "--allow", "mcp__*")
    assert result.returncode == 0, result.stderr
    echoed, status = tool_results(requests[1])
    assert echoed == "Echo: over http"
    assert "notes.txt" in status  # the fixture's untracked file
    listed = {
        json.loads(line)["name"]: json.loads(line)
        for line in run_seri("mcp", "list", "--json").stdout.splitlines()
    }
    assert listed["git"]["protocol_version"] == "2026-07-28"
    assert listed["web"]["transport"] == "http" and listed["web"]["state"] == "ready"


def test_a_broken_mcp_json_or_an_unset_variable_is_named_and_the_chat_goes_on(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    (project / ".mcp.json").write_text('{"mcpServers": {"a": ')
    write_config(seri_home, mcpServers={"b": {"url": "https://x.example/mcp?k=${NO_SUCH_VAR}"}})
    result, requests = chat(run_seri, [{"text": "fine"}])
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fine\n"
    assert ".mcp.json" in result.stderr and "is not JSON" in result.stderr
    assert "MCP server 'b' in config.json" in result.stderr and "NO_SUCH_VAR" in result.stderr
    assert not any(name.startswith("mcp__") for name in tool_names(requests[0]))


def test_on_a_terminal_seri_asks_before_the_first_task_and_remembers_a_yes(
    run_seri: RunSeri, project: Path, mcp_servers: Servers, seri_home: Path, tmp_path: Path
) -> None:
    from tests.e2e.test_interactive import PROMPT, Terminal, _terminal_env

    marker = tmp_path / "started"
    refused = {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
    write_mcp_json(project, {"fs": filesystem(mcp_servers, project), "refused": refused})
    (project / "note.txt").write_text("asked first\n")
    with FakeModel(reading(project / "note.txt", "read it")) as fake:
        term = Terminal(["chat"], project, _terminal_env(seri_home, fake))
        term.expect(PROMPT)
        term.type("read note.txt")
        about_fs = term.expect("[y/N] ")
        term.type("y")
        about_refused = term.expect("[y/N] ")
        term.type("n")
        term.expect(PROMPT)
        term.type("/exit")
        status = term.wait()
        requests = fake.requests
    assert status == 0, term.output
    assert "seri asks before your first task" in term.output
    assert "MCP server 'fs', which runs: " in about_fs and str(mcp_servers.filesystem) in about_fs
    assert "MCP server 'refused'" in about_refused
    assert tool_results(requests[1]) == ["asked first\n"]
    assert not marker.exists()
    rows = {
        row["name"]: row
        for row in map(json.loads, run_seri("mcp", "list", "--json").stdout.splitlines())
    }
    assert rows["fs"]["approved"] is True and rows["refused"]["approved"] is False
