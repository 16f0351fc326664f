"""`seri acp` driven by acpx, the headless ACP client (npm), a client nobody here wrote
(issue 28): a session started in the terminal (`seri chat -p`), continued through acpx (a
prompt whose write asks permission, which acpx's --approve-all grants, and whose file goes
through acpx's fs/write_text_file), then resumed in the terminal with all of it.

acpx needs Node >= 22.13: tests/acp_client/install.py installs it with a Node build from the
npm registry (``make acp-client``)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.acp_client.install import install
from tests.conftest import SERI, seri_env
from tests.e2e.test_chat import call, chat_env
from tests.mcp.install import Unavailable

# Node starts acpx three times, and acpx starts `seri acp` twice: ~10 s on an idle machine.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def acpx_bin() -> Path:
    installed = install()
    if isinstance(installed, Unavailable):
        pytest.skip(installed.reason)
    return installed


def _messages(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_a_terminal_session_continued_through_acpx_and_resumed_in_the_terminal(
    acpx_bin: Path, seri_home: Path, project: Path, tmp_path: Path
) -> None:
    script = [
        {"text": "hello from the terminal"},
        {"tool_calls": [call("w1", "write_file", path="notes.md", content="from acpx\n")]},
        {"text": "wrote notes.md"},
        {"text": "back in the terminal"},
    ]
    acpx_home = tmp_path / "acpx-home"  # acpx keeps its own records under $HOME
    acpx_home.mkdir()
    with FakeModel(script) as fake:
        env = seri_env(seri_home, chat_env(fake))

        def seri(*argv: str) -> subprocess.CompletedProcess[str]:
            done = subprocess.run(
                [SERI, *argv], cwd=project, env=env, capture_output=True, text=True, timeout=60,
                check=False,
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            return done

        assert seri("chat", "-p", "say hello").stdout == "hello from the terminal\n"
        sid = json.loads(seri("sessions", "--json").stdout.splitlines()[0])["id"]
        client_env = dict(env, HOME=str(acpx_home), PATH=f"{acpx_bin}:{env['PATH']}")
        acpx = ["acpx", "--agent", f"{SERI} acp", "--cwd", str(project), "--approve-all"]
        acpx += ["--format", "json", "--ttl", "1"]

        def client(*argv: str) -> str:
            started = time.monotonic()
            done = subprocess.run(
                [*acpx, *argv], cwd=project, env=client_env, capture_output=True, text=True,
                timeout=120, check=False,
            )  # fmt: skip
            assert done.returncode == 0, (done.stdout, done.stderr)
            print(f"acpx {argv[0]} {argv[1]}: {time.monotonic() - started:.1f} s")
            return done.stdout

        client("sessions", "new", "--resume-session", sid)
        stream = _messages(client("prompt", "write the notes"))
        client("sessions", "close")
        resumed = seri("chat", "--resume", sid, "-p", "and now?")
        last = fake.requests[-1]["messages"]

    # acpx offered its file system: the write went through it (and it saved the file).
    methods = [m.get("method") for m in stream]
    asked = next(m for m in stream if m.get("method") == "session/request_permission")
    assert asked["params"]["sessionId"] == sid
    assert asked["params"]["toolCall"]["toolCallId"] == "w1"
    answer = next(m for m in stream if m.get("id") == asked["id"] and "result" in m)
    assert answer["result"]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}
    assert "fs/write_text_file" in methods
    # A client nobody here wrote holds seri to one read before the question and one when the
    # write runs (the person may have typed meanwhile), and one write.
    reads = [m for m in stream if m.get("method") == "fs/read_text_file"]
    assert len(reads) == 2 and methods.count("fs/write_text_file") == 1, methods
    assert (project / "notes.md").read_text() == "from acpx\n"
    updates = [m["params"]["update"] for m in stream if m.get("method") == "session/update"]
    done = [u for u in updates if u.get("toolCallId") == "w1" and u.get("status") == "completed"]
    assert done[0]["content"][0]["newText"] == "from acpx\n"
    said = "".join(
        u["content"]["text"] for u in updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert said == "wrote notes.md"
    assert {"stopReason": "end_turn"} in [m.get("result") for m in stream]
    # The terminal resumed the session with both earlier turns in it.
    assert resumed.stdout == "back in the terminal\n"
    text = json.dumps(last)
    for earlier in ("say hello", "hello from the terminal", "write the notes", "wrote notes.md"):
        assert earlier in text
    assert "Created notes.md" in text
