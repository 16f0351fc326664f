"""What `seri chat -p` loads on its way to the first request.

The installed seri runs a task against the scripted fake with Python's import-time report on.
The provider's HTTP is httpx (the design card's library; it loads in a thread while the
session opens), and nothing of the terminal chat, MCP or the exporters' libraries comes
along: prompt_toolkit, rich, cattrs, MCP's SDK and seri's MCP modules stay out of a scripted
run with no MCP server configured. docopt reads the command line, as it reads every command's.
What reads the answer (SSE parsing, assembly, error classification, retry planning) loads once
the request is out: it is not needed for the first byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, seri_env
from tests.e2e.test_chat import chat_env

NEVER_ON_THE_WAY = {
    "prompt_toolkit",
    "rich",
    "pygments",
    "cattrs",
    "mcp",
    "seri.io.mcp.mcp_hub",
    "seri.io.mcp.mcp_http",
    "seri.runtime.terminal.repl",
}


@pytest.mark.parametrize("window", ["configured", "asked of the server", "click installed"])
def test_a_task_loads_httpx_and_nothing_of_the_terminal_chat_or_mcp(
    seri_home: Path, project: Path, tmp_path: Path, window: str
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    extra: dict[str, str] = {}
    if window == "configured":
        (seri_home / "config.json").write_text('{"context_window": 200000}')
    if window == "click installed":
        # With click importable, httpx's package imports its command-line client, which
        # imports rich and pygments: seri keeps that client out.
        (tmp_path / "site" / "click").mkdir(parents=True)
        (tmp_path / "site" / "click" / "__init__.py").write_text("")
        extra["PYTHONPATH"] = str(tmp_path / "site")
    with FakeModel([{"text": "done"}]) as fake:
        env = seri_env(seri_home, {**chat_env(fake), "PYTHONPROFILEIMPORTTIME": "1", **extra})
        done = subprocess.run(
            [SERI, "chat", "-p", "hi"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        asked = [r for r in fake.requests if "messages" in r]
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "done\n"
    assert len(asked) == 1
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert {
        "httpx",
        "seri.io.provider.provider",
        "seri.io.provider.http_client",
    } <= loaded  # read right
    assert not NEVER_ON_THE_WAY & loaded
    assert "docopt" in loaded


# What only reading an answer needs: loaded after the request has gone out.
AFTER_THE_REQUEST = {
    "seri.pure.provider.sse",
    "seri.pure.provider.stream_assembly",
    "seri.pure.provider.delta_parts",
    "seri.pure.provider.reported_usage",
    "seri.pure.provider.provider_errors",
    "seri.pure.provider.provider_error_body",
    "seri.pure.provider.retry_hints",
    "seri.pure.provider.retry_plan",
    "seri.pure.provider.server_windows",
    "seri.io.provider.provider_stream",
    "seri.pure.provider.provider_failure",
}

# What a plain task's first request does not need: a goal's records, loop and alarm (signal's
# enums with them), what runs a tool call (the tools, the checkpoints) and what reads a resumed
# session back. Each record module loaded costs attrs' class creation (~0.5 ms a record on this
# machine).
ONLY_WHEN_USED = {
    "seri.runtime.session.loading",
    "signal",
    "seri.pure.agent.goals",
    "seri.runtime.agent.goal_loop",
    "seri.io.tools.tools",
    "seri.io.tools.write_tools",
    "seri.io.tools.checkpoints",
    "seri.pure.tools.output_capture",
}

# seri's own entry point, with an audit hook that writes the loaded modules down when the
# first connection is made (the request's first byte follows it), and the cycle collector's
# state then.
_AT_FIRST_CONNECT = """
import gc, json, os, sys
def _noted(event, args):
    if event == "socket.connect" and not os.path.exists(sys.argv[-1]):
        with open(sys.argv[-1], "w") as out:
            json.dump({"modules": sorted(sys.modules), "collecting": gc.isenabled(),
                       "frozen": gc.get_freeze_count()}, out)
sys.addaudithook(_noted)
from seri.commands.main import main
sys.exit(main(sys.argv[1:-1]))
"""


def test_what_reads_the_answer_loads_after_the_request_is_out_and_the_collector_is_back_on(
    seri_home: Path, project: Path, tmp_path: Path
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text('{"context_window": 200000}')
    noted = tmp_path / "modules-at-first-connect.txt"
    with FakeModel([{"text": "done"}]) as fake:
        done = subprocess.run(
            [sys.executable, "-c", _AT_FIRST_CONNECT, "chat", "-p", "hi", str(noted)],
            cwd=project,
            env=seri_env(seri_home, chat_env(fake)),
            capture_output=True,
            text=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "done\n"
    at_connect = json.loads(noted.read_text())
    before = set(at_connect["modules"])
    assert {"httpx", "seri.io.provider.provider"} <= before  # noted where the request is sent
    assert not AFTER_THE_REQUEST & before
    assert not ONLY_WHEN_USED & before
    # Off while the session opened (seri.commands.chat), on again once it was open, with
    # what start-up made set aside.
    assert at_connect["collecting"]
    assert at_connect["frozen"] > 10_000
