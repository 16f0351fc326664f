"""Issue 26's start-up target: the prompt is on screen within 300 ms of `seri chat` starting.
`python -m scripts.bench.prompt_on_screen`

`seri chat` is spawned on a pseudo-terminal (TERM=xterm-256color, 120x40) against the loopback
model, in a scratch project with its own profile (made by one warm-up run first, as a person's
is there after their first chat). The time is from just before the fork to the moment the
prompt's text (`seri> `) has come out of the terminal; the bench answers the terminal's
questions (the cursor position report) as a terminal would, then leaves with Ctrl-D. RUNS runs
(default 15): the median, the fastest, the slowest and p10-p90, with seri's CPU time until the
prompt (user + system, less disturbed by other load) and the load average before and after. With
IMPORTTIME=1 one more run writes Python's import-time report to bench-results/
prompt_on_screen.importtime.txt, biggest first. Writes bench-results/prompt_on_screen.md.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import sys
import tempfile
import termios
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.common import RESULTS, SERI, stat
from scripts.fake_model import FakeModel

RUNS = int(os.environ.get("RUNS", "15"))
TARGET_SECONDS = 0.300
PROMPT = b"seri> "
ASKED_POSITION = b"\x1b[6n"
DEADLINE_SECONDS = 30.0


def spawn(env: dict[str, str], cwd: Path) -> tuple[int, int]:
    pid, master = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(SERI, [SERI, "chat"], env)
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    return pid, master


def until_prompt(master: int, started: float) -> tuple[float, bytes]:
    """Seconds from ``started`` until the prompt is out, and what came before it."""
    shown = b""
    while time.perf_counter() - started < DEADLINE_SECONDS:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break  # the chat ended (its output says why)
        if not chunk:
            break
        shown += chunk
        if ASKED_POSITION in chunk:
            os.write(master, b"\x1b[1;1R")
        if PROMPT in shown:
            return time.perf_counter() - started, shown
    raise SystemExit(f"the prompt never showed; the terminal got:\n{shown[-2000:]!r}")


def leave(pid: int, master: int) -> None:
    """Ctrl-D, and wait for the chat to end."""
    os.write(master, b"\x04")
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:
                break
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            os.close(master)
            return
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(master)


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, every thread's (user + system, in clock ticks)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat_line = f.read(4096)
    fields = stat_line[stat_line.rfind(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    started = time.perf_counter()
    pid, master = spawn(env, cwd)
    seconds, _ = until_prompt(master, started)
    cpu = cpu_seconds(pid)
    leave(pid, master)
    return seconds, cpu


def import_report(env: dict[str, str], cwd: Path) -> str:
    """One run with Python's import-time report: the modules loaded before the prompt, by
    their cumulative time, biggest first."""
    with tempfile.TemporaryFile() as report:
        started = time.perf_counter()
        pid, master = pty.fork()
        if pid == 0:
            os.chdir(cwd)
            os.dup2(report.fileno(), 2)  # the report goes to stderr, away from the screen
            os.execve(SERI, [SERI, "chat"], {**env, "PYTHONPROFILEIMPORTTIME": "1"})
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        until_prompt(master, started)
        leave(pid, master)
        report.seek(0)
        lines = report.read().decode(errors="replace").splitlines()
    rows = [line for line in lines if line.startswith("import time:") and "|" in line]
    rows = rows[1:]  # the header

    def cumulative(line: str) -> int:
        return int(line.split("|")[1])

    return "\n".join(sorted(rows, key=cumulative, reverse=True)[:60]) + "\n"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, FakeModel([]) as fake:
        project = Path(tmp) / "project"
        project.mkdir()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": tmp,
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "SERI_HOME": str(Path(tmp) / "profile"),
            "SERI_BASE_URL": fake.base_url,
            "SERI_MODEL": "loopback/bench",
        }
        if os.environ.get("PYTHONPATH"):  # another checkout's seri, to compare builds
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        one_run(env, project)  # warm-up: the profile and its database are made
        load_before = os.getloadavg()
        walls, cpus = [], []
        for _ in range(RUNS):
            seconds, cpu_used = one_run(env, project)
            walls.append(seconds)
            cpus.append(cpu_used)
        load_after = os.getloadavg()
        if os.environ.get("IMPORTTIME"):
            RESULTS.mkdir(parents=True, exist_ok=True)
            (RESULTS / "prompt_on_screen.importtime.txt").write_text(import_report(env, project))
    wall, cpu = stat(walls), stat(cpus)
    text = "\n".join(
        [
            f"# Prompt on screen: `seri chat` on a pseudo-terminal ({RUNS} runs)",
            "",
            f"Load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
            f"({os.cpu_count()} CPUs).",
            "",
            "| | median | fastest | slowest | p10-p90 | target |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| wall, spawn to `seri> ` | {wall.median * 1000:.0f} ms | "
            f"{min(walls) * 1000:.0f} ms | {max(walls) * 1000:.0f} ms | "
            f"{wall.low * 1000:.0f}-{wall.high * 1000:.0f} ms | ≤ 300 ms: "
            f"{'ok' if wall.median <= TARGET_SECONDS else 'OVER'} |",
            f"| CPU until then (user + system, 10 ms ticks) | {cpu.median * 1000:.0f} ms | "
            f"{min(cpus) * 1000:.0f} ms | {max(cpus) * 1000:.0f} ms | "
            f"{cpu.low * 1000:.0f}-{cpu.high * 1000:.0f} ms | |",
            "",
        ]
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "prompt_on_screen.md").write_text(text)
    print(text)
    return 0 if wall.median <= TARGET_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
