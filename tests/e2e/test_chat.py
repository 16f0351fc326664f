"""`seri chat` end to end: the installed program, real HTTP to the loopback fake, real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, RunSeri, seri_env
from tests.request_schema import assert_valid_request, pairing_ok

KEY = "sk-or-v1-" + "ab12" * 16


def chat_env(fake: FakeModel, **extra: str) -> dict[str, str]:
    return {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, **extra}


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def test_a_task_writes_edits_runs_and_answers(run_seri: RunSeri, project: Path) -> None:
    script = [
        {"tool_calls": [call("c1", "write_file", path="a.py", content="print('hi')\n")]},
        {"tool_calls": [call("c2", "edit", path="a.py", old_string="hi", new_string="ho")]},
        {"tool_calls": [call("c3", "bash", command="python3 a.py")]},
        {"text": "All done."},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat",
            "--allow",
            "write_file",
            "--allow",
            "edit",
            "--allow",
            "bash",
            "-p",
            "make a.py",
            env=chat_env(fake),
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    assert (project / "a.py").read_text() == "print('ho')\n"
    assert len(requests) == 4
    for body in requests:
        assert_valid_request(body)
        assert {t["function"]["name"] for t in body["tools"]} >= {"read_file", "bash"}
        assert pairing_ok(body["messages"][1:])
    bash_result = requests[3]["messages"][-1]
    assert bash_result["role"] == "tool" and "ho" in bash_result["content"]


def test_the_budget_exits_1_after_exactly_n_model_turns(run_seri: RunSeri) -> None:
    forever = [{"tool_calls": [call("c", "glob", pattern="*")], "repeat": 50}]
    with FakeModel(forever) as fake:
        result = run_seri("chat", "--max-turns", "3", "-p", "loop", env=chat_env(fake))
        calls = len(fake.requests)
    assert result.returncode == 1
    assert calls == 3
    assert "turn budget" in result.stderr


def test_config_max_turns_and_slash_max_turns(run_seri: RunSeri, seri_home: Path) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"max_turns": 2}))
    forever = [{"tool_calls": [call("c", "glob", pattern="*")], "repeat": 50}]
    with FakeModel(forever) as fake:
        result = run_seri("chat", input="go\n/max-turns 4\ngo again\n", env=chat_env(fake))
        calls = len(fake.requests)
    assert result.returncode == 1
    assert calls == 2 + 4


def test_missing_key_says_how_to_set_one(run_seri: RunSeri) -> None:
    result = run_seri("chat", "-p", "hi")
    assert result.returncode == 2
    assert "OPENROUTER_API_KEY" in result.stderr
    assert "Traceback" not in result.stderr
    # Another remote server: its name and SERI_API_KEY, not OpenRouter's sign-up page.
    other = run_seri("chat", "-p", "hi", env={"SERI_BASE_URL": "https://llm.example.com/v1"})
    assert other.returncode == 2
    assert other.stderr.startswith("seri: no API key for llm.example.com")
    assert "SERI_API_KEY" in other.stderr and "openrouter" not in other.stderr.lower()


def test_a_local_server_needs_no_key(run_seri: RunSeri) -> None:
    """llama.cpp, Ollama or vLLM on this machine: no dummy key, no Authorization header."""
    with FakeModel([{"text": "local answer"}]) as fake:
        result = run_seri("chat", "-p", "hi", env={"SERI_BASE_URL": fake.base_url})
        headers = fake.request_headers[0]
    assert result.returncode == 0, result.stderr
    assert result.stdout == "local answer\n"
    assert "authorization" not in {name.lower() for name in headers}


def test_what_needs_asking_is_denied_without_a_terminal(run_seri: RunSeri, project: Path) -> None:
    script = [
        {"tool_calls": [call("c1", "write_file", path="x.txt", content="no")]},
        {"text": "I could not write it."},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "-p", "write x", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0
    assert not (project / "x.txt").exists()
    denial = requests[1]["messages"][-1]
    assert denial["role"] == "tool" and denial["content"].startswith("denied")


def test_prompt_from_stdin_and_continue(run_seri: RunSeri) -> None:
    with FakeModel([{"text_from_last_user": True}, {"text": "second"}]) as fake:
        first = run_seri("chat", "-p", "-", input="from stdin\n", env=chat_env(fake))
        second = run_seri("chat", "--continue", "-p", "again", env=chat_env(fake))
        requests = fake.requests
    assert first.stdout == "from stdin\n"
    assert second.returncode == 0
    texts = [m.get("content") for m in requests[1]["messages"]]
    assert "from stdin\n" in texts and "again" in texts


def test_resume_by_prefix_keeps_the_conversation(run_seri: RunSeri) -> None:
    with FakeModel([{"text": "one"}, {"text": "two"}]) as fake:
        run_seri("chat", "-p", "first", env=chat_env(fake))
        listed = run_seri("sessions", "--json").stdout.splitlines()
        session_id = json.loads(listed[0])["id"]
        result = run_seri("chat", "--resume", session_id[:6], "-p", "second", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0
    roles = [m["role"] for m in requests[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_the_prompt_is_frozen_and_its_hashes_kept(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    (project / "AGENTS.md").write_text("Always answer in French.\n")
    steps = [
        {"tool_calls": [call("c1", "write_file", path="AGENTS.md", content="changed")]},
        {"text": "ok"},
    ]
    with FakeModel(steps) as fake:
        run_seri("chat", "-p", "go", env=chat_env(fake))
        requests = fake.requests
    # The agent may not rewrite AGENTS.md (it asks, and -p denies); and the prompt never changes.
    systems = {r["messages"][0]["content"] for r in requests}
    assert len(systems) == 1
    assert "Always answer in French." in systems.pop()
    export = run_seri("trajectory", "export").stdout.splitlines()
    header = json.loads(export[0])
    assert header["type"] == "header"
    assert "AGENTS.md (project)" in header["prompt_hashes"]


def test_a_cut_stream_is_not_saved_as_complete(run_seri: RunSeri) -> None:
    script = [{"text": "partial answer that will be cut", "cut_after_chunks": 3}]
    with FakeModel(script) as fake:
        result = run_seri("chat", "-p", "go", env=chat_env(fake))
    assert result.returncode == 1
    shown = run_seri("sessions", "show", _only_session(run_seri), "--json").stdout.splitlines()
    stored = [json.loads(line) for line in shown[1:]]
    assert [m["role"] for m in stored] == ["user", "assistant"]
    # What arrived is kept for the person, flagged incomplete, never as a finished answer.
    assert stored[1]["kind"] == "partial"


def test_a_kill_during_a_tool_leaves_a_resumable_session(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    script = [
        {"tool_calls": [call("c1", "bash", command="sleep 30")]},
        {"text": "resumed fine"},
    ]
    with FakeModel(script) as fake:
        env = seri_env(seri_home, chat_env(fake))
        proc = subprocess.Popen(
            [SERI, "chat", "--allow", "bash", "-p", "sleep"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        fake.wait_for_requests(1, timeout=20)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        result = run_seri("chat", "--continue", "-p", "go on", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "resumed fine\n"
    assert pairing_ok(requests[-1]["messages"][1:])
    assert_valid_request(requests[-1])


def _only_session(run_seri: RunSeri) -> str:
    lines = run_seri("sessions", "--json").stdout.splitlines()
    assert len(lines) == 1
    return str(json.loads(lines[0])["id"])


@pytest.mark.parametrize("status", [401, 402, 404])
def test_refusals_are_clear_and_never_print_the_key(run_seri: RunSeri, status: int) -> None:
    with FakeModel([{"status": status}]) as fake:
        result = run_seri("chat", "-p", "hi", env=chat_env(fake))
        calls = len(fake.requests)
    assert result.returncode == 1
    assert calls == 1
    assert KEY not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
