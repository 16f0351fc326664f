"""Real MCP servers for the tests: installed once (tests/mcp/install.py), started once per worker.

Every fixture here is session-scoped: each xdist worker starts one of each server and its
tests share them, so the suite pays start-up once per worker, not once per test. The tests
that need a private server (one that will crash, hang or be killed) start their own.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seri.io.mcp.mcp_hub import McpHub
from seri.pure.mcp.mcp_config import McpServerConfig, parse_servers
from tests.mcp.install import Servers, Unavailable, install

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "hostile_server.py"
SDK_SERVER = HERE / "servers" / "sdk_http_server.py"
# A made-up provider key: present in the environment seri runs in, under an innocent name
# too, so the tests can show it never reaches a server.
FAKE_API_KEY = "sk-or-v1-" + "5e7a" * 16
SERVER_START_SECONDS = 60.0


@pytest.fixture(scope="session")
def mcp_servers() -> Servers:
    installed = install()
    if isinstance(installed, Unavailable):
        pytest.skip(f"MCP servers not installed: {installed.reason}")
    return installed


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited: {log.read_text(errors='replace')[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(
        f"nothing listened on port {port}: {log.read_text(errors='replace')[-2000:]}"
    )


def _serve(argv: list[str], env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )
    _wait_for_port(port, proc, log)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def everything_http(
    mcp_servers: Servers, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """server-everything's streamable HTTP endpoint (it listens on every interface)."""
    port = free_port()
    log = tmp_path_factory.mktemp("everything-http") / "server.log"
    env = {**os.environ, "PORT": str(port)}
    proc = _serve([str(mcp_servers.everything), "streamableHttp"], env, port, log)
    yield f"http://127.0.0.1:{port}/mcp"
    _stop(proc)


@pytest.fixture(scope="session")
def sdk_http(mcp_servers: Servers, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The official SDK's stateless-era server on loopback (tests/mcp/servers)."""
    port = free_port()
    log = tmp_path_factory.mktemp("sdk-http") / "server.log"
    proc = _serve(
        [str(mcp_servers.python), str(SDK_SERVER), str(port)], dict(os.environ), port, log
    )
    yield f"http://127.0.0.1:{port}/mcp"
    _stop(proc)


@pytest.fixture(scope="session")
def git_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("git-repo")
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    for argv in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "commit", "-q", "--allow-empty", "-m", "first commit of the fixture"],
    ):
        subprocess.run(argv, cwd=repo, env=env, check=True)
    (repo / "notes.txt").write_text("untracked\n")
    return repo


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one directory server-filesystem may touch."""
    return Path(os.path.realpath(tmp_path_factory.mktemp("fs-allowed")))


def parent_environment() -> dict[str, str]:
    """The environment seri would run in: with credentials a server must never see."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith("SERI_")},
        "OPENROUTER_API_KEY": FAKE_API_KEY,
        "INNOCENT_LOOKING": FAKE_API_KEY,
        "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "DATABASE_URL": "postgres://admin:hunter2hunter2@db.internal/prod",
        "GIT_AUTHOR_NAME": "Ada Lovelace",
    }


def configs(entries: dict[str, object]) -> tuple[McpServerConfig, ...]:
    parsed = parse_servers(entries, parent_environment(), "tests")
    assert not parsed.problems, parsed.problems
    return parsed.servers


@pytest.fixture(scope="session")
def real_hub(
    mcp_servers: Servers,
    everything_http: str,
    sdk_http: str,
    git_repo: Path,
    shared_dir: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[McpHub]:
    """One hub with every real server, both transports and both eras."""
    entries: dict[str, object] = {
        "everything": {
            "command": str(mcp_servers.everything),
            "args": ["stdio"],
            "env": {"VISIBLE_SETTING": "on", "GITHUB_TOKEN": "${GIVEN_TOKEN:-ghp_givenonpurpose}"},
        },
        "fs": {"command": str(mcp_servers.filesystem), "args": [str(shared_dir)]},
        "git": {"command": str(mcp_servers.git), "args": ["--repository", str(git_repo)]},
        "git_legacy": {
            "command": str(mcp_servers.git),
            "args": ["--repository", str(git_repo)],
            "protocol": "legacy",
        },
        "everything_http": {"type": "http", "url": everything_http},
        "sdk": {"type": "http", "url": sdk_http},
        "sdk_legacy": {"type": "streamable-http", "url": sdk_http, "protocol": "legacy"},
    }
    hub = McpHub(
        configs(entries),
        parent_env=parent_environment(),
        project_dir=tmp_path_factory.mktemp("project"),
        known_secrets=(FAKE_API_KEY,),
    )
    hub.start()
    statuses = hub.wait_ready(SERVER_START_SECONDS)
    not_ready = [s for s in statuses if s.state != "ready"]
    assert not not_ready, not_ready
    yield hub
    hub.close()


def hostile(mode: str, *extra: str) -> dict[str, object]:
    """An ``mcpServers`` entry for tests/mcp/hostile_server.py in ``mode``."""
    return {"command": sys.executable, "args": [str(HOSTILE), "--mode", mode, *extra]}
