"""What `seri chat -p` loads on its way to the first request (issue 15's start-up target).

The installed seri runs a task against the scripted fake with Python's import-time report on;
httpx and what it brings (urllib.request, http.client, email, h11, httpcore, idna) never load,
and neither do ssl and the CA bundle for a plain-http loopback server. docopt reads the
command line, as it reads every command's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, seri_env
from tests.e2e.test_chat import chat_env

NEVER_ON_THE_WAY = {
    "httpx",
    "httpcore",
    "h11",
    "idna",
    "urllib.request",
    "http.client",
    "email",
    "email.utils",
    "ssl",
    "certifi",
}


@pytest.mark.parametrize("window", ["configured", "asked of the server"])
def test_a_task_never_loads_httpx_urllib_request_http_client_or_email(
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
    assert "seri.io.http_connection" in loaded  # the report is read right
    assert not NEVER_ON_THE_WAY & loaded
    assert "docopt" in loaded
