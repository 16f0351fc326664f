"""`make bench-mcp`: what seri's MCP client costs, and that it costs nothing when unused.

    .venv/bin/python -m scripts.bench.mcp

1. Import time of the client modules (fresh interpreters, round-robin), beside the floor
   (``python -c pass``) and the official SDK (``import mcp`` in the servers' venv, where it
   is installed; seri never imports it).
2. Start-up of the quick commands: ``seri --version`` and ``seri sessions`` timed, and the
   modules they import listed by ``-X importtime``: no MCP module may appear.
3. Per real server: from nothing to a connected, listed server (spawn or connect, settle the
   era, ``tools/list``), through seri's own client, and one ``tools/call`` after that.

Writes bench-results/mcp.md and prints the same table.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.common import (
    PYTHON,
    RESULTS,
    SERI,
    fmt_seconds,
    log,
    run_timed,
    seri_env,
    stat,
)
from seri.io.mcp.mcp_http import HttpTransport
from seri.io.mcp.mcp_session import McpConnection
from seri.io.mcp.mcp_stdio import StdioTransport
from seri.io.mcp.mcp_transport import Transport
from seri.pure.mcp.mcp_tools import McpTool
from tests.mcp.install import Servers, install

IMPORT_RUNS = 15
MARGINAL_RUNS = 40
STARTUP_RUNS = 20
SERVER_RUNS = 5
SDK_SERVER = (
    Path(__file__).resolve().parents[2] / "tests" / "mcp" / "servers" / "sdk_http_server.py"
)
MCP_MODULE_PREFIXES = ("seri.io.mcp", "seri.pure.mcp", "seri.pure.mcp.jsonrpc", "mcp", "httpx")


def timed_runs(
    commands: dict[str, list[str]], runs: int, env: dict[str, str], *, cpu: bool = False
) -> dict[str, list[float]]:
    """Each command ``runs`` times after a warm-up, taking turns: wall times, or the child's
    CPU time (user + system), which other load on the machine disturbs much less."""
    times: dict[str, list[float]] = {key: [] for key in commands}
    for round_ in range(runs + 1):
        for key, argv in commands.items():
            done = run_timed(argv, env=env, stdout_to_devnull=True)
            if done.returncode != 0:
                raise RuntimeError(f"{key} failed: {done.stderr.decode()[-300:]}")
            if round_:
                times[key].append(done.cpu if cpu else done.seconds)
    return times


# What a chat has imported by the time of its first model call: the MCP modules' cost in a
# chat is what they add to this.
CHAT_BASE = (
    "import seri.runtime.terminal.chat_session, seri.io.provider.provider, seri.io.tools.tools, seri.io.tools.shell, "  # noqa: E501
    "seri.pure.compaction.result_cap, seri.pure.trajectories.redaction, httpx"
)


def imports(servers: Servers) -> list[tuple[str, str]]:
    env = seri_env()
    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "a chat's modules at its first model call": [PYTHON, "-c", CHAT_BASE],
        "… plus seri.io.mcp.mcp_hub and seri.io.mcp.mcp_http": [
            PYTHON,
            "-c",
            CHAT_BASE + ", seri.io.mcp.mcp_hub, seri.io.mcp.mcp_http",
        ],
        "import seri.io.mcp.mcp_hub (stdio servers)": [PYTHON, "-c", "import seri.io.mcp.mcp_hub"],
        "… and seri.io.mcp.mcp_http (httpx; HTTP servers)": [
            PYTHON,
            "-c",
            "import seri.io.mcp.mcp_hub, seri.io.mcp.mcp_http",
        ],
        "official SDK: import mcp": [str(servers.python), "-c", "import mcp"],
        "official SDK: ClientSession + stdio_client": [
            str(servers.python),
            "-c",
            "from mcp import ClientSession; from mcp.client.stdio import stdio_client",
        ],
    }
    times = timed_runs(commands, IMPORT_RUNS, env)
    rows = [(key, stat(values).seconds()) for key, values in times.items()]
    marginal = {key: commands[key] for key in list(commands)[1:3]}
    cpu = timed_runs(marginal, MARGINAL_RUNS, env, cpu=True)
    base, with_mcp = (stat(values).median for values in cpu.values())
    rows.append(
        (
            f"what MCP adds to a chat that has servers (CPU time, {MARGINAL_RUNS} runs)",
            f"{fmt_seconds(with_mcp - base)} ({fmt_seconds(base)} → {fmt_seconds(with_mcp)})",
        )
    )
    return rows


def startup() -> list[tuple[str, str]]:
    home = tempfile.mkdtemp(prefix="seri-bench-mcp-")
    env = seri_env(SERI_HOME=home)
    rows: list[tuple[str, str]] = []
    commands = {"seri --version": [SERI, "--version"], "seri sessions": [SERI, "sessions"]}
    times = timed_runs(commands, STARTUP_RUNS, env)
    for key, argv in commands.items():
        loaded = subprocess.run(
            [
                PYTHON,
                "-X",
                "importtime",
                "-c",
                f"import sys; sys.argv={argv!r}; from seri.commands.main import main; main()",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        ).stderr
        modules = [
            line.rsplit("|", 1)[-1].strip()
            for line in loaded.splitlines()
            if line.startswith("import time:")
        ]
        mcp = sorted({m for m in modules if m.startswith(MCP_MODULE_PREFIXES)})
        rows.append(
            (
                key,
                f"{stat(times[key]).seconds()}; MCP modules imported: "
                f"{', '.join(mcp) if mcp else 'none'} (of {len(modules)})",
            )
        )
    return rows


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(argv: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return proc
        time.sleep(0.05)
    raise RuntimeError(f"{argv[0]} did not listen")


def connect_and_list(
    make: Callable[[], Transport], *, era: str, over_http: bool, call: tuple[str, dict[str, object]]
) -> tuple[float, float, str, int]:
    started = time.perf_counter()
    connection = McpConnection(
        make(), server="bench", client_version="bench", era=era, over_http=over_http
    )
    try:
        info = connection.open(time.monotonic() + 60)
        listed = connection.list_tools(60)
        ready = time.perf_counter() - started
        if isinstance(info, Exception) or not hasattr(listed, "tools"):
            raise RuntimeError(f"could not connect: {info} {listed}")
        before = time.perf_counter()
        outcome = connection.call_tool(McpTool(name=call[0]), call[1], timeout=30)
        called = time.perf_counter() - before
        if outcome.is_error:
            raise RuntimeError(outcome.text)
        return ready, called, f"{info.era} {info.version}", len(listed.tools)  # type: ignore[union-attr]
    finally:
        connection.close()


def servers_rows(servers: Servers) -> list[tuple[str, str]]:
    env = dict(os.environ)
    repo = tempfile.mkdtemp(prefix="seri-bench-git-")
    subprocess.run(["git", "init", "-q", repo], check=True)
    shared = tempfile.mkdtemp(prefix="seri-bench-fs-")
    everything_port, sdk_port = free_port(), free_port()
    background = [
        serve(
            [str(servers.everything), "streamableHttp"],
            {**env, "PORT": str(everything_port)},
            everything_port,
        ),
        serve([str(servers.python), str(SDK_SERVER), str(sdk_port)], env, sdk_port),
    ]

    def stdio(*argv: str) -> Callable[[], Transport]:
        return lambda: StdioTransport(argv[0], argv[1:], env=env)

    def http(port: int) -> Callable[[], Transport]:
        return lambda: HttpTransport(f"http://127.0.0.1:{port}/mcp")

    cases = [
        (
            "server-everything, stdio",
            stdio(str(servers.everything), "stdio"),
            "auto",
            False,
            ("echo", {"message": "hi"}),
        ),
        (
            "server-filesystem, stdio",
            stdio(str(servers.filesystem), shared),
            "auto",
            False,
            ("list_allowed_directories", {}),
        ),
        (
            "mcp-server-git, stdio (stateless)",
            stdio(str(servers.git), "--repository", repo),
            "auto",
            False,
            ("git_status", {"repo_path": repo}),
        ),
        (
            "mcp-server-git, stdio (handshake forced)",
            stdio(str(servers.git), "--repository", repo),
            "legacy",
            False,
            ("git_status", {"repo_path": repo}),
        ),
        (
            "server-everything, HTTP (server already up)",
            http(everything_port),
            "auto",
            True,
            ("echo", {"message": "hi"}),
        ),
        (
            "SDK server, HTTP stateless (already up)",
            http(sdk_port),
            "auto",
            True,
            ("add", {"a": 1, "b": 2}),
        ),
    ]
    rows: list[tuple[str, str]] = []
    try:
        for label, make, era, over_http, call in cases:
            ready, called, detail = [], [], ""
            tools = 0
            for _ in range(SERVER_RUNS):
                first, second, detail, tools = connect_and_list(
                    make, era=era, over_http=over_http, call=call
                )
                ready.append(first)
                called.append(second)
            log(f"{label}: {fmt_seconds(stat(ready).median)}")
            rows.append(
                (
                    label,
                    f"{stat(ready).seconds()} to {tools} tools ({detail}); "
                    f"a call {fmt_seconds(stat(called).median)}",
                )
            )
    finally:
        for proc in background:
            proc.terminate()
            proc.wait(10)
    return rows


def main() -> None:
    servers = install()
    if not isinstance(servers, Servers):
        raise SystemExit(f"cannot install the MCP servers: {servers.reason}")
    sections = [
        ("Import time (median, p10–p90)", imports(servers)),
        ("Start-up of the quick commands, no MCP server configured", startup()),
        (f"Connect + settle era + tools/list ({SERVER_RUNS} runs, median)", servers_rows(servers)),
    ]
    lines = ["# seri's MCP client: costs", ""]
    for title, rows in sections:
        lines += [f"## {title}", "", "| what | time |", "| --- | --- |"]
        lines += [f"| {what} | {value} |" for what, value in rows]
        lines.append("")
    text = "\n".join(lines)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mcp.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
