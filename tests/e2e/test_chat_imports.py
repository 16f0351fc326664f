"""What `seri chat -p` loads on its way to the first request.

The installed seri runs a task against the scripted fake with Python's import-time report on.
The provider's HTTP is httpx (the design card's library; it loads in a thread while the
session opens), and nothing of the terminal chat, MCP or the exporters' libraries comes
along: prompt_toolkit, rich, cattrs, MCP's SDK and seri's MCP modules stay out of a scripted
run with no MCP server configured. docopt reads the command line, as it reads every command's.
"""

from __future__ import annotations

import subprocess
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
    "seri.io.mcp_hub",
    "seri.io.mcp_http",
    "seri.runtime.repl",
}


@pytest.mark.parametrize("window", ["configured", "asked of the server"])
def test_a_task_loads_httpx_and_nothing_of_the_terminal_chat_or_mcp(
    seri_home: Path, project: Path, window: str
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    if window == "configured":
        (seri_home / "config.json").write_text('{"context_window": 200000}')
    with FakeModel([{"text": "done"}]) as fake:
        env = seri_env(seri_home, {**chat_env(fake), "PYTHONPROFILEIMPORTTIME": "1"})
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
    assert {"httpx", "seri.io.provider", "seri.io.http_client"} <= loaded  # read right
    assert not NEVER_ON_THE_WAY & loaded
    assert "docopt" in loaded
