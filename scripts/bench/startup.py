"""Row 1, start-up: seri's quickest commands against the peers' and the interpreter's own start.

Every command is run STARTUP_RUNS times after one warm-up run, the commands taking turns
round-robin so that a slow spell on the machine hits them all alike.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scripts.bench.common import (
    PYTHON,
    SERI,
    STARTUP_RUNS,
    Stat,
    clean_env,
    failure_text,
    log,
    run_timed,
    stat,
)
from scripts.bench.data import store_with_sessions
from scripts.bench.peers import Program, seed_llm_logs, version_of
from scripts.bench.table import Row, met

SESSIONS = 1000
PEER_TIMEOUT = 30


@dataclass
class Command:
    key: str
    argv: tuple[str, ...] | None
    env: dict[str, str]
    cwd: str
    problem: str = ""
    times: list[float] = field(default_factory=list)
    version: str = ""
    lines: int = 0


def _measure(commands: list[Command], runs: int) -> None:
    for round_ in range(runs + 1):
        for command in commands:
            if command.argv is None or command.problem:
                continue
            timed = run_timed(command.argv, env=command.env, cwd=command.cwd, timeout=PEER_TIMEOUT)
            if timed.returncode != 0:
                command.problem = failure_text(timed)
                continue
            if round_ == 0:  # the warm-up: page cache, first-use files in the temp HOME
                command.version = version_of(timed.stdout)
                command.lines = len(timed.stdout.splitlines())
                continue
            command.times.append(timed.seconds)


def _cell(command: Command, label: str = "") -> str:
    if command.argv is None or command.problem or not command.times:
        reason = command.problem or "not run"
        return f"peer unavailable ({reason})"
    prefix = f"{label}: " if label else ""
    return prefix + stat(command.times).seconds()


def _faster_row(seri: Command, what: str, peer: Command, label: str) -> Row:
    if peer.problem or not peer.times or not seri.times:
        return Row("1", what, _cell(seri), _cell(peer), "faster than the peer", met(None))
    ratio = stat(peer.times).median / stat(seri.times).median
    return Row(
        "1",
        what,
        _cell(seri),
        f"{_cell(peer, label)}; seri {ratio:.1f}× faster"
        if ratio >= 1
        else f"{_cell(peer, label)}; seri {1 / ratio:.1f}× slower",
        "faster than the peer",
        met(ratio > 1),
    )


def run(programs: dict[str, Program], work: Path) -> list[Row]:
    home = work / "startup-home"
    project = Path(os.path.realpath(work / "startup-project"))
    project.mkdir(parents=True, exist_ok=True)
    log(f"start-up: writing {SESSIONS} sessions")
    store_with_sessions(home, str(project), SESSIONS)
    seri_env = clean_env(SERI_HOME=str(home))
    peer_home = Path(tempfile.mkdtemp(prefix="peer-home-", dir=work))
    peer_env = clean_env(
        HOME=str(peer_home),
        XDG_CONFIG_HOME=str(peer_home / ".config"),
        XDG_DATA_HOME=str(peer_home / ".local" / "share"),
        XDG_CACHE_HOME=str(peer_home / ".cache"),
        XDG_STATE_HOME=str(peer_home / ".local" / "state"),
    )
    llm_path = work / "llm-user"
    llm_env = {**peer_env, "LLM_USER_PATH": str(llm_path)}
    cwd = str(project)

    def peer(key: str, *args: str, env: dict[str, str] | None = None) -> Command:
        program = programs.get(key)
        if program is None or program.argv is None:
            return Command(
                key, None, peer_env, cwd, program.problem if program else "not installed"
            )
        return Command(key, (*program.argv, *args), env or peer_env, cwd)

    commands = {
        "floor": Command("floor", (PYTHON, "-c", "pass"), seri_env, cwd),
        "seri-version": Command("seri-version", (SERI, "--version"), seri_env, cwd),
        "seri-list": Command("seri-list", (SERI, "sessions", "list"), seri_env, cwd),
        "codex": peer("codex", "--version"),
        "codex-native": peer("codex-native", "--version"),
        "claude": peer("claude", "--version"),
        "opencode": peer("opencode", "--version"),
        "llm": peer("llm", "--version", env=llm_env),
        "llm-logs": peer("llm", "logs", "list", "-n", "1", env=llm_env),
    }
    llm = programs.get("llm")
    if llm is not None and llm.available:
        problem = seed_llm_logs(llm, llm_path, SESSIONS)
        if problem:
            commands["llm-logs"].problem = problem
    log(f"start-up: {STARTUP_RUNS} runs of {len(commands)} commands, round-robin")
    _measure(list(commands.values()), STARTUP_RUNS)
    c = commands
    rows: list[Row] = []
    floor_cell = f"floor `python -c pass`: {_cell(c['floor'])}"
    version: Stat | None = stat(c["seri-version"].times) if c["seri-version"].times else None
    listing: Stat | None = stat(c["seri-list"].times) if c["seri-list"].times else None
    rows.append(
        Row(
            "1",
            f"`seri --version` (n={STARTUP_RUNS})",
            _cell(c["seri-version"]),
            floor_cell,
            "median < 30 ms",
            met(version.median < 0.030 if version else False),
        )
    )
    rows.append(
        Row(
            "1",
            f"`seri sessions list`, {SESSIONS:,} sessions ({c['seri-list'].lines} lines out)",
            _cell(c["seri-list"]),
            floor_cell,
            "median < 50 ms",
            met(listing.median < 0.050 if listing else False),
        )
    )
    for key, label in (
        ("codex", "`codex --version` (npm launcher: node, then the native binary)"),
        ("claude", "`claude --version`"),
        ("opencode", "`opencode --version`"),
        ("llm", "`llm --version`"),
    ):
        peer_cmd = c[key]
        name = f"{peer_cmd.version}" if peer_cmd.version else key
        rows.append(_faster_row(c["seri-version"], f"`seri --version` vs {label}", peer_cmd, name))
    native = c["codex-native"]
    if native.problem or not native.times or version is None:
        rows.append(
            Row(
                "1",
                "`seri --version` vs native `codex --version` binary",
                _cell(c["seri-version"]),
                _cell(native),
                "within 4× of it",
                met(None),
            )
        )
    else:
        ratio = version.median / stat(native.times).median
        rows.append(
            Row(
                "1",
                "`seri --version` vs native `codex --version` binary (Rust, no node)",
                _cell(c["seri-version"]),
                f"{_cell(native, native.version)}; seri {ratio:.1f}× its time",
                "within 4× of it",
                met(ratio <= 4),
            )
        )
    rows.append(
        _faster_row(
            c["seri-list"],
            f"`seri sessions list` vs `llm logs list -n 1` ({SESSIONS:,} logged responses)",
            c["llm-logs"],
            "llm",
        )
    )
    return rows
