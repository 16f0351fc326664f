"""Issue 15's start-up and listing figures: `python -m scripts.bench.scripting`.

- `seri chat -p` (and `--output-format stream-json`) from spawn to the first byte of its
  first request (and of its model request) at a loopback server: a TCP relay in front of the
  scripted fake notes when each connection's first byte arrives; with the process's CPU time.
- simonw/llm's `llm -m fake hi` to its first request byte at the same fake, for comparison
  (installed into .cache/bench/llm-venv by scripts/bench/peers.py).
- `seri sessions list` with 1,000 sessions (its target: 50 ms).
- `seri sessions show` (JSON and human) of 100,000 messages beside `sqlite3 -json` reading
  the same rows (target: within 2x).
- the older release's directory scan that every start does.

Writes bench-results/scripting.md. Medians of RUNS runs after one warm-up. PARTS=sessions
measures only the `seri sessions` rows (no model server, no llm install).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from scripts.bench.common import SERI as OWN_SERI
from scripts.bench.common import seri_env
from scripts.bench.data import store_with_history, store_with_sessions
from scripts.fake_model import FakeModel
from scripts.tcp_relay import Relay as TcpRelay

RUNS = int(os.environ.get("RUNS", "7"))
PARTS = os.environ.get("PARTS", "all")
# Another build of seri to measure (e.g. the main branch's, for a before/after table).
SERI = os.environ.get("SERI_BIN", OWN_SERI)
OUT = Path(os.environ.get("BENCH_OUT", "bench-results/scripting.md"))


class Relay(TcpRelay):
    """A loopback TCP relay that notes when each request's first bytes arrive."""

    def __init__(self, target_port: int) -> None:
        self.arrivals: list[tuple[float, bytes]] = []
        super().__init__(target_port, on_data=self._note)

    def _note(self, data: bytes) -> None:
        if data.startswith((b"GET ", b"POST ")):
            # A request's first bytes (keep-alive connections carry several).
            self.arrivals.append((time.perf_counter(), data.split(b"\r\n", 1)[0]))


def _timed(argv: list[str], env: dict[str, str], cwd: str) -> float:
    return _timed_with_cpu(argv, env, cwd)[0]


def _timed_with_cpu(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run, its output read through a pipe."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{argv}: exit {done.returncode}: {done.stderr.decode()[-400:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms"


def first_request(
    root: Path, *, window_known: bool, extra: tuple[str, ...] = ()
) -> tuple[list[float], list[float], list[float]]:
    """`seri chat -p hi [extra]`: spawn to the first request byte, to the model request's
    first byte, and the process's CPU time (user + system: what a loaded machine does not
    inflate the way it inflates wall time)."""
    home = root / f"home-{'known' if window_known else 'lookup'}{'-'.join(('', *extra))}"
    project = root / "project"
    project.mkdir(exist_ok=True)
    home.mkdir()
    if window_known:
        (home / "config.json").write_text('{"context_window": 200000}')
    any_byte, model_byte, cpu = [], [], []
    with FakeModel([{"text": "ok", "repeat": RUNS + 1}]) as fake:
        relay = Relay(int(fake.base_url.split(":")[2].split("/")[0]))
        env = seri_env(
            SERI_HOME=str(home),
            SERI_BASE_URL=f"http://127.0.0.1:{relay.port}/v1",
            OPENROUTER_API_KEY="sk-test",
            SERI_MODEL="fake/model",
        )
        for run in range(RUNS + 1):
            relay.arrivals.clear()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                [SERI, "chat", "-p", "hi", *extra],
                env=env,
                cwd=project,
                capture_output=True,
                check=False,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            assert done.returncode == 0, done.stderr
            if run == 0:
                continue
            any_byte.append(relay.arrivals[0][0] - start)
            posts = [at for at, line in relay.arrivals if line.startswith(b"POST")]
            model_byte.append(posts[0] - start)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        relay.listener.close()
    return any_byte, model_byte, cpu


def llm_first_request(root: Path) -> tuple[list[float], list[float]] | str:
    """simonw/llm (`llm -m fake hi`, an OpenAI-compatible model pointed at the same loopback
    fake) to its request's first byte, and its CPU time; or why it could not be measured."""
    from scripts.bench.peers import LLM_VENV, install_llm

    problem = install_llm()
    if problem:
        return problem
    user_path = root / "llm-user"
    user_path.mkdir()
    first, cpu = [], []
    with FakeModel([{"text": "ok", "repeat": RUNS + 1}]) as fake:
        relay = Relay(int(fake.base_url.split(":")[2].split("/")[0]))
        (user_path / "extra-openai-models.yaml").write_text(
            "- model_id: fake\n"
            "  model_name: fake/model\n"
            f"  api_base: http://127.0.0.1:{relay.port}/v1\n"
        )
        env = seri_env(LLM_USER_PATH=str(user_path), OPENAI_API_KEY="sk-test")
        for run in range(RUNS + 1):
            relay.arrivals.clear()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                [str(LLM_VENV / "bin" / "llm"), "-m", "fake", "--key", "sk-test", "hi"],
                env=env,
                cwd=root,
                capture_output=True,
                check=False,
            )
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if done.returncode != 0 or not relay.arrivals:
                return f"llm failed: {done.stderr.decode(errors='replace')[-300:]}"
            if run == 0:
                continue
            first.append(relay.arrivals[0][0] - start)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        relay.listener.close()
    return first, cpu


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="seri-bench-scripting-"))
    lines = ["# Scripting figures (issue 15)", "", f"Medians of {RUNS} runs after a warm-up.", ""]
    try:
        if PARTS != "sessions":
            lines += startup_lines(root)
        lines += sessions_lines(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def startup_lines(root: Path) -> list[str]:
    """`seri chat -p` to its first request byte (three ways), llm's figure, `--version`."""
    lines = []
    for known, extra in ((False, ()), (True, ()), (True, ("--output-format", "stream-json"))):
        any_byte, model_byte, cpu = first_request(root, window_known=known, extra=extra)
        what = "context_window in config" if known else "window looked up (GET /models)"
        flags = f" {' '.join(extra)}" if extra else ""
        lines.append(
            f"- `seri chat -p{flags}` to the first request byte, {what}: "
            f"{median_ms(any_byte)}; to the model request: {median_ms(model_byte)}"
            f" (target 120 ms); CPU {median_ms(cpu)}"
        )
    measured = llm_first_request(root)
    if isinstance(measured, str):
        lines.append(f"- `llm -m fake hi` (simonw/llm): not measured: {measured}")
    else:
        lines.append(
            f"- `llm -m fake hi` (simonw/llm, an OpenAI-compatible model at the same fake) to "
            f"its request's first byte: {median_ms(measured[0])}; CPU {median_ms(measured[1])}"
        )
    version = [_timed([SERI, "--version"], seri_env(), str(root)) for _ in range(RUNS)]
    lines.append(f"- `seri --version`: {median_ms(version)}")
    return lines


def sessions_lines(root: Path) -> list[str]:
    """`seri sessions list` of 1,000 sessions (and with the older release's files), and
    `seri sessions show` of 100,000 messages beside `sqlite3 -json`."""
    lines = []

    home = root / "many"
    store_with_sessions(home, str(root), 1000)
    env = seri_env(SERI_HOME=str(home))
    _timed([SERI, "sessions", "list"], env, str(root))
    listing = [_timed([SERI, "sessions", "list"], env, str(root)) for _ in range(RUNS)]
    lines.append(f"- `seri sessions list`, 1,000 sessions: {median_ms(listing)} (target 50 ms)")
    legacy = home / "sessions"
    legacy.mkdir()
    for number in range(1000):
        (legacy / f"old-{number:04d}.jsonl").write_text("")
    _timed([SERI, "sessions", "list"], env, str(root))  # imports (records) them once
    scanned = [_timed([SERI, "sessions", "list"], env, str(root)) for _ in range(RUNS)]
    lines.append(
        f"- the same with 1,000 older-release files already imported in sessions/: "
        f"{median_ms(scanned)} (the scan on every start costs the difference)"
    )

    big = root / "big"
    store, session_id = store_with_history(big, 100_000, str(root))
    store.close()
    env = seri_env(SERI_HOME=str(big))
    db = big / "seri.db"
    sqlite = shutil.which("sqlite3")
    shows = {}
    for label, argv in (
        ("show --json", [SERI, "sessions", "show", session_id, "--json"]),
        ("show (human)", [SERI, "sessions", "show", session_id]),
    ):
        _timed(argv, env, str(root))
        shows[label] = [_timed_with_cpu(argv, env, str(root)) for _ in range(RUNS)]
    if sqlite:
        argv = [
            sqlite,
            "-json",
            str(db),
            f"SELECT seq, created, body FROM messages WHERE session_id = '{session_id}'"
            " ORDER BY seq",
        ]
        _timed(argv, env, str(root))
        base = [_timed_with_cpu(argv, env, str(root)) for _ in range(RUNS)]
        base_wall, base_cpu = ([run[part] for run in base] for part in (0, 1))
        lines.append(
            f"- `sqlite3 -json` of the 100,000 messages: {median_ms(base_wall)};"
            f" CPU {median_ms(base_cpu)}"
        )
        for label, runs in shows.items():
            wall, cpu = ([run[part] for run in runs] for part in (0, 1))
            ratio = statistics.median(wall) / statistics.median(base_wall)
            cpu_ratio = statistics.median(cpu) / statistics.median(base_cpu)
            lines.append(
                f"- `seri sessions {label}`, 100,000 messages: {median_ms(wall)}"
                f" ({ratio:.2f}x sqlite3 -json; target 2x); CPU {median_ms(cpu)}"
                f" ({cpu_ratio:.2f}x)"
            )
    else:
        lines.append("- sqlite3 is not installed: `apt-get install sqlite3` for the baseline")
    return lines


if __name__ == "__main__":
    sys.exit(main())
