"""Spawn to the first request byte, seri beside every peer in one run:
`python -m scripts.bench.first_byte` (and a section of `make bench`).

Each program gets a one-line task non-interactively and is pointed at one loopback server
(``FirstByte``) that notes when the first byte of its first request arrives. Each speaks
its own wire format (seri, llm and opencode the OpenAI chat API, codex the Responses API,
claude the Anthropic Messages API); nothing is answered, since the program is stopped
(SIGKILL to its process group) at that first byte. CPU is the whole process group's user +
system time at that moment (/proc/PID/stat, children it already reaped included): what the
program spent to get its request out.

The programs take turns (round robin), RUNS rounds after one warm-up round, so that the
machine's load at any moment falls on all of them alike. Each keeps one HOME for the whole
run (the warm-up does its first-use work there, as on a machine it has run on before).
Writes bench-results/first-byte.md and prints it.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scripts.bench import peers
from scripts.bench.common import REPO, RESULTS, SERI, clean_env, log, seri_env
from scripts.bench.table import Row

RUNS = int(os.environ.get("RUNS", "9"))
# Another checkout of seri to run beside this one (e.g. main before a change): its source
# tree, run with this .venv's interpreter and packages.
SERI_BEFORE = os.environ.get("SERI_BEFORE", "")
TASK = "say ok"
# A first run may do first-use work (opencode installs its provider package); later ones
# that take this long have hung.
WARM_UP_TIMEOUT = 120.0
RUN_TIMEOUT = 60.0
OUT = RESULTS / "first-byte.md"
_TICKS = os.sysconf("SC_CLK_TCK")


class FirstByte:
    """A loopback server that notes when the first byte of a run's first request arrives.

    Only a connection's first piece counts, and only on a connection accepted during the
    current run (``reset`` starts one): the rest of a stopped program's request, or a late
    connection of it, is not taken for the next program's first byte. Nothing is answered:
    each program is stopped at its first byte.
    """

    def __init__(self) -> None:
        self.arrived = threading.Event()
        self.at = 0.0
        self.head = b""
        self._run = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._first, args=(connection, self._run), daemon=True).start()

    def _first(self, connection: socket.socket, run: int) -> None:
        with connection:
            try:
                data = connection.recv(65536)
            except OSError:
                return
            if data and run == self._run and not self.arrived.is_set():
                self.at = time.perf_counter()
                self.head = data.split(b"\r\n", 1)[0][:80]
                self.arrived.set()

    def reset(self) -> None:
        self._run += 1
        self.arrived.clear()
        self.head = b""

    def close(self) -> None:
        self.listener.close()


def group_cpu(group: int) -> float:
    """User + system seconds of every live process in ``group``, with the children each has
    reaped (a launcher's finished helpers)."""
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue  # gone meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        # After the name: state ppid pgrp session ... utime(14) stime cutime cstime (1-based).
        if int(fields[2]) != group:
            continue
        total += sum(int(value) for value in fields[11:15])
    return total / _TICKS


@dataclass
class Contender:
    name: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path
    note: str = ""
    first: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    heads: set[bytes] = field(default_factory=set)
    problem: str = ""  # why it was dropped (its warm-up run sent nothing)
    reference: bool = False  # a line to read seri against, not a peer (the libraries' floor)
    misses: list[str] = field(default_factory=list)  # measured runs that sent nothing


def _once(who: Contender, server: FirstByte, timeout: float) -> tuple[float, float] | str:
    """One run: (seconds to the first byte, CPU seconds by then), or why there was none."""
    server.reset()
    with tempfile.TemporaryFile() as stderr:
        start = time.perf_counter()
        process = subprocess.Popen(
            who.argv,
            env=who.env,
            cwd=who.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,
        )
        arrived = False
        deadline = start + timeout
        while not arrived and process.poll() is None and time.perf_counter() < deadline:
            arrived = server.arrived.wait(0.005)
        arrived = arrived or server.arrived.is_set()
        cpu = group_cpu(process.pid) if arrived else 0.0
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        time.sleep(0.05)  # a stopped program's last connections are accepted in its own run
        if arrived:
            who.heads.add(server.head)
            return server.at - start, cpu
        stderr.seek(0)
        lines = [ln for ln in stderr.read().decode(errors="replace").splitlines() if ln.strip()]
        how = "timed out" if process.returncode == -signal.SIGKILL else f"exit {process.returncode}"
        return f"no request reached the server ({how}): {(lines or [''])[-1][:160]}"


def _peer_home(root: Path, name: str) -> dict[str, str]:
    home = root / f"home-{name}"
    home.mkdir()
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


def _seri(root: Path, base: str, *, source: str = "") -> Contender:
    home = root / f"seri-home{'-before' if source else ''}"
    home.mkdir()
    # The window given, as a configured user has it: no GET /models before the request.
    (home / "config.json").write_text('{"context_window": 200000}')
    env = seri_env(
        SERI_HOME=str(home),
        SERI_BASE_URL=f"{base}/v1",
        OPENROUTER_API_KEY="sk-test",
        SERI_MODEL="fake/model",
    )
    if not source:
        return Contender("seri", (SERI, "chat", "-p", TASK), env, root)
    env["PYTHONPATH"] = source
    launch = "import sys; from seri.commands.main import main; sys.exit(main())"
    argv = (str(Path(SERI).with_name("python")), "-c", launch, "chat", "-p", TASK)
    return Contender("seri (before)", argv, env, root, f"from {source}")


def _floor(root: Path, base: str) -> Contender:
    """Python and the card's libraries alone (``first_byte_floor``), run as seri is."""
    python = str(Path(SERI).with_name("python"))
    argv = (python, "-m", "scripts.bench.first_byte_floor", f"{base}/v1", str(root / "floor.db"))
    env = seri_env(PYTHONPATH=str(REPO))
    note = "Python + httpx, attrs, apsw, docopt-ng alone: no seri code"
    return Contender("floor (libraries)", argv, env, root, note, reference=True)


def _llm(program: peers.Program, root: Path, base: str) -> Contender:
    assert program.argv is not None
    user_path = root / "llm-user"
    user_path.mkdir()
    (user_path / "extra-openai-models.yaml").write_text(
        f"- model_id: fake\n  model_name: fake/model\n  api_base: {base}/v1\n"
    )
    env = clean_env(LLM_USER_PATH=str(user_path), OPENAI_API_KEY="sk-test")
    return Contender("llm", (*program.argv, "-m", "fake", TASK), env, root)


def _codex(program: peers.Program, root: Path, base: str) -> Contender:
    assert program.argv is not None
    env = clean_env(**_peer_home(root, program.name), BENCH_API_KEY="sk-test")
    env["CODEX_HOME"] = str(Path(env["HOME"]) / ".codex")
    Path(env["CODEX_HOME"]).mkdir()
    provider = (
        f'model_providers.bench={{name="bench", base_url="{base}/v1", '
        'env_key="BENCH_API_KEY", wire_api="responses"}'
    )
    argv = (
        *program.argv,
        "exec",
        "--skip-git-repo-check",
        "-c",
        'model_provider="bench"',
        "-c",
        provider,
        "-m",
        "fake-model",
        TASK,
    )
    note = "launcher (node) + native" if program.name == "codex" else "native binary alone"
    return Contender(program.name, argv, env, root, note)


def _claude(program: peers.Program, root: Path, base: str) -> Contender:
    assert program.argv is not None
    env = clean_env(
        **_peer_home(root, "claude"),
        ANTHROPIC_BASE_URL=base,
        ANTHROPIC_API_KEY="sk-test",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )
    return Contender("claude", (*program.argv, "-p", TASK), env, root, "Anthropic Messages API")


def _opencode(program: peers.Program, root: Path, base: str) -> Contender:
    assert program.argv is not None
    env = clean_env(
        **_peer_home(root, "opencode"),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
    )
    project = root / "opencode-project"
    project.mkdir()
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "bench": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "bench",
                "options": {"baseURL": f"{base}/v1", "apiKey": "sk-test"},
                "models": {"fake": {"name": "fake"}},
            }
        },
    }
    (project / "opencode.json").write_text(json.dumps(config))
    # opencode takes its directory from $PWD (inherited from whoever ran the bench), and
    # reads the config named here wherever that is.
    env.update(PWD=str(project), OPENCODE_CONFIG=str(project / "opencode.json"))
    argv = (*program.argv, "run", "-m", "bench/fake", TASK)
    return Contender("opencode", argv, env, project)


_PEERS: Mapping[str, Callable[[peers.Program, Path, str], Contender]] = {
    "codex-native": _codex,
    "codex": _codex,
    "claude": _claude,
    "opencode": _opencode,
    "llm": _llm,
}


def measure(programs: Mapping[str, peers.Program], root: Path) -> tuple[list[Contender], str]:
    """Every contender RUNS times, round robin; returns them and the load average seen."""
    server = FirstByte()
    base = f"http://127.0.0.1:{server.port}"
    contenders = [_seri(root, base), _floor(root, base)]
    if SERI_BEFORE:
        contenders.append(_seri(root, base, source=SERI_BEFORE))
    missing = []
    for key, build in _PEERS.items():
        program = programs.get(key)
        if program is not None and program.available:
            contenders.append(build(program, root, base))
        else:
            missing.append(f"{key}: {program.problem if program else 'not installed'}")
    loads = []
    try:
        for round_ in range(RUNS + 1):
            loads.append(os.getloadavg()[0])
            for who in contenders:
                if who.problem:
                    continue
                got = _once(who, server, WARM_UP_TIMEOUT if round_ == 0 else RUN_TIMEOUT)
                if isinstance(got, str):
                    log(f"{who.name}: {got}")
                    if round_ == 0:
                        who.problem = got
                    else:
                        who.misses.append(got)
                elif round_ > 0:
                    who.first.append(got[0])
                    who.cpu.append(got[1])
            log(f"first byte: round {round_}/{RUNS} done")
    finally:
        server.close()
    load = f"load average (1 min) {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} cores"
    return contenders, load + ("; not measured: " + "; ".join(missing) if missing else "")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def table(contenders: list[Contender], load: str) -> str:
    seri = next(who for who in contenders if who.name == "seri")
    lines = [
        "# Spawn to first request byte, side by side",
        "",
        f"`{TASK}` as a one-line non-interactive task; {RUNS} runs each, round robin after a "
        f"warm-up round; {load}; Python {platform.python_version()}.",
        "",
        "| program | first byte, median | min | CPU by then, median | vs seri (median) "
        "| first request line | notes |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for who in contenders:
        if who.problem or not who.first:
            lines.append(f"| {who.name} | — | — | — | — | — | {who.problem} |")
            continue
        ratio = (
            f"{statistics.median(who.first) / statistics.median(seri.first):.1f}×"
            if seri.first and who is not seri
            else ""
        )
        head = ", ".join(sorted(h.decode(errors="replace") for h in who.heads))
        note = who.note
        if who.misses:
            missed = f"{len(who.misses)} of {RUNS} runs sent nothing in {RUN_TIMEOUT:.0f} s"
            note = f"{note}; {missed}" if note else missed
        lines.append(
            f"| {who.name} | {_ms(statistics.median(who.first))} | {_ms(min(who.first))} "
            f"| {_ms(statistics.median(who.cpu))} | {ratio} | `{head}` | {note} |"
        )
    lines += [
        "",
        "First byte: wall clock from spawn to the first byte at the loopback server; the program "
        "is then stopped. CPU: the process group's user + system time at that moment.",
    ]
    return "\n".join(lines) + "\n"


def ahead_of_every_peer(contenders: list[Contender]) -> bool | None:
    seri = next(who for who in contenders if who.name == "seri")
    others = [who for who in contenders if who is not seri and who.first and not who.reference]
    if not seri.first or not others:
        return None
    mine = statistics.median(seri.first)
    return all(mine < statistics.median(who.first) for who in others)


def run(programs: Mapping[str, peers.Program], work: Path) -> list[Row]:
    """The `make bench` section: one row per peer, and the table in bench-results/."""
    root = work / "first-byte"
    root.mkdir()
    contenders, load = measure(programs, root)
    RESULTS.mkdir(exist_ok=True)
    OUT.write_text(table(contenders, load), encoding="utf-8")
    seri = contenders[0]
    if not seri.first:
        return [Row("1b", "chat -p to first request byte", seri.problem, "", "", "no")]
    mine = f"{_ms(statistics.median(seri.first))} (min {_ms(min(seri.first))})"
    rows = []
    for who in contenders[1:]:
        if who.reference:
            continue
        what = f"first request byte vs {who.name}"
        if not who.first:
            rows.append(Row("1b", what, mine, who.problem, "", "n/a"))
            continue
        theirs = f"{_ms(statistics.median(who.first))} (min {_ms(min(who.first))})"
        ahead = statistics.median(seri.first) < statistics.median(who.first)
        rows.append(
            Row(
                "1b",
                f"first request byte vs {who.name}",
                mine,
                theirs,
                "ahead",
                "yes" if ahead else "no",
            )
        )
    return rows


def main() -> int:
    programs = peers.install_all()
    root = Path(tempfile.mkdtemp(prefix="seri-bench-first-byte-"))
    try:
        contenders, load = measure(programs, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    text = table(contenders, load)
    RESULTS.mkdir(exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(text, end="")
    log(f"wrote {OUT}; seri ahead of every peer: {ahead_of_every_peer(contenders)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
