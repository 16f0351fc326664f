"""Row 1, start-up: seri's quickest commands against the peers' and the interpreter's own start.

Every command is run STARTUP_RUNS times after one warm-up run, the commands taking turns
round-robin so that a slow spell on the machine hits them all alike. Wall time (spawn to
exit) decides the targets; the child's CPU time (user + system) is shown beside seri's
figures because it is much less disturbed by other load on the machine.
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
    clean_env,
    failure_text,
    fmt_seconds,
    log,
    run_timed,
    seri_env,
    stat,
)
from scripts.bench.data import store_with_sessions
from scripts.bench.peers import Program, seed_llm_logs, version_of
from scripts.bench.table import Row, met, met_wall

SESSIONS = 1000
PEER_TIMEOUT = 30
FASTER = "faster than the peer"


@dataclass
class Command:
    key: str
    argv: tuple[str, ...] | None
    env: dict[str, str]
    cwd: str
    problem: str = ""
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    version: str = ""
    lines: int = 0

    @property
    def ok(self) -> bool:
        return self.argv is not None and not self.problem and bool(self.times)

    @property
    def median(self) -> float:
        return stat(self.times).median

    def under(self, limit: float) -> str:
        if not self.ok:
            return met(False)
        return met_wall(self.median < limit, stat(self.cpu).median < limit)

    def cell(self, label: str = "", *, cpu: bool = False) -> str:
        if not self.ok:
            return f"peer unavailable ({self.problem or 'not run'})"
        text = (f"{label}: " if label else "") + stat(self.times).seconds()
        if cpu:
            text += f"; cpu {fmt_seconds(stat(self.cpu).median)}"
        return text


def _measure(commands: list[Command], runs: int) -> None:
    for round_ in range(runs + 1):
        for command in commands:
            if command.argv is None or command.problem:
                continue
            timed = run_timed(command.argv, env=command.env, cwd=command.cwd, timeout=PEER_TIMEOUT)
            if timed.returncode != 0:
                command.problem = failure_text(timed)
                continue
            if round_ == 0:  # the warm-up: page cache, bytecode, first-use files in HOME
                if command.argv[-1] == "--version":
                    command.version = version_of(timed.stdout)
                command.lines = len(timed.stdout.splitlines())
                continue
            command.times.append(timed.seconds)
            command.cpu.append(timed.cpu)


def _faster_row(seri: Command, what: str, peer: Command) -> Row:
    label = peer.version or peer.key
    if not peer.ok or not seri.ok:
        return Row("1", what, seri.cell(cpu=True), peer.cell(), FASTER, met(None))
    ratio = peer.median / seri.median
    verdict = f"seri {ratio:.1f}× faster" if ratio >= 1 else f"seri {1 / ratio:.1f}× slower"
    return Row(
        "1", what, seri.cell(cpu=True), f"{peer.cell(label)}; {verdict}", FASTER, met(ratio > 1)
    )


def run(programs: dict[str, Program], work: Path) -> list[Row]:
    home = work / "startup-home"
    project = Path(os.path.realpath(work / "startup-project"))
    project.mkdir(parents=True, exist_ok=True)
    log(f"start-up: writing {SESSIONS} sessions")
    store_with_sessions(home, str(project), SESSIONS)
    env = seri_env(SERI_HOME=str(home))
    uncached = clean_env(SERI_HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
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
            problem = program.problem if program else "not installed"
            return Command(key, None, peer_env, cwd, problem)
        return Command(key, (*program.argv, *args), env or peer_env, cwd)

    c = {
        "floor": Command("floor", (PYTHON, "-c", "pass"), env, cwd),
        "version": Command("version", (SERI, "--version"), env, cwd),
        "list": Command("list", (SERI, "sessions", "list"), env, cwd),
        "list-uncached": Command("list-uncached", (SERI, "sessions", "list"), uncached, cwd),
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
            c["llm-logs"].problem = problem
    log(f"start-up: {STARTUP_RUNS} runs of {len(c)} commands, round-robin")
    _measure(list(c.values()), STARTUP_RUNS)
    floor = f"floor `python -c pass`: {c['floor'].cell(cpu=True)}"
    version, listing = c["version"], c["list"]
    rows = [
        Row(
            "1",
            f"`seri --version` (n={STARTUP_RUNS})",
            version.cell(cpu=True),
            floor,
            "median < 30 ms",
            version.under(0.030),
        ),
        Row(
            "1",
            f"`seri sessions list`, {SESSIONS:,} sessions ({listing.lines} lines out)",
            listing.cell(cpu=True),
            floor,
            "median < 50 ms",
            listing.under(0.050),
        ),
        Row(
            "1",
            "`seri sessions list` as run here: PYTHONDONTWRITEBYTECODE=1, no .pyc for seri",
            c["list-uncached"].cell(cpu=True),
            "the row above: bytecode cached, as after `pip install`",
            "(informative)",
            met(None),
        ),
    ]
    for key, label in (
        ("codex", "`codex --version` (npm launcher: node, then the native binary)"),
        ("claude", "`claude --version`"),
        ("opencode", "`opencode --version`"),
        ("llm", "`llm --version`"),
    ):
        rows.append(_faster_row(version, f"`seri --version` vs {label}", c[key]))
    native = c["codex-native"]
    what = "`seri --version` vs the native `codex` binary's `--version` (Rust, no node)"
    if not native.ok or not version.ok:
        rows.append(Row("1", what, version.cell(cpu=True), native.cell(), "within 4×", met(None)))
    else:
        ratio = version.median / native.median
        rows.append(
            Row(
                "1",
                what,
                version.cell(cpu=True),
                f"{native.cell(native.version)}; seri takes {ratio:.1f}× its time",
                "within 4× of it",
                met(ratio <= 4),
            )
        )
    rows.append(
        _faster_row(
            listing,
            f"`seri sessions list` vs `llm logs list -n 1` ({SESSIONS:,} logged responses)",
            c["llm-logs"],
        )
    )
    return rows
