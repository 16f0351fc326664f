"""Shared pieces: paths, summary statistics, formatting, timed subprocesses."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "bench"
RESULTS = REPO / "bench-results"
VENV_BIN = REPO / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python")
SERI = str(VENV_BIN / "seri")

# Repetition counts: modest, so the whole run fits in minutes on two cores.
STARTUP_RUNS = 15
LOAD_RUNS = 5


def log(text: str) -> None:
    """Progress for the person watching; the table itself goes to stdout."""
    print(f"bench: {text}", file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Stat:
    """The median and the spread of repeated measurements.

    The spread is p10–p90 with ten or more samples, else min–max.
    """

    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        if self.n >= 10:
            return statistics.quantiles(self.values, n=10, method="inclusive")[0]
        return min(self.values)

    @property
    def high(self) -> float:
        if self.n >= 10:
            return statistics.quantiles(self.values, n=10, method="inclusive")[8]
        return max(self.values)

    def seconds(self) -> str:
        """'12.3 ms (11.9–13.0)' for values in seconds."""
        low = fmt_seconds(self.low, unit_of=self.median)
        high = fmt_seconds(self.high, unit_of=self.median)
        return f"{fmt_seconds(self.median)} ({low}–{high})"


def stat(values: Sequence[float]) -> Stat:
    if not values:
        raise ValueError("no measurements")
    return Stat(tuple(values))


def _unit(seconds: float) -> tuple[str, float]:
    magnitude = abs(seconds)
    if magnitude >= 1:
        return "s", 1.0
    if magnitude >= 1e-3:
        return "ms", 1e3
    return "µs", 1e6


def fmt_seconds(seconds: float, *, unit_of: float | None = None) -> str:
    """Seconds in the unit that suits ``unit_of`` (default: the value itself).

    With ``unit_of`` the unit name is left off, for the inside of a spread.
    """
    name, factor = _unit(seconds if unit_of is None else unit_of)
    value = seconds * factor
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 10 else 2
    text = f"{value:.{digits}f}"
    return text if unit_of is not None else f"{text} {name}"


def fmt_bytes(count: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(count) >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count:.0f} B"


@dataclass(frozen=True)
class Timed:
    seconds: float  # wall clock, spawn to exit
    returncode: int
    stdout: bytes
    stderr: bytes
    cpu: float = 0.0  # the child's user + system time


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_timed(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 60,
    stdout_to_devnull: bool = False,
    stdin: bytes | None = None,
) -> Timed:
    """Run a command once and time it from spawn to exit (wall clock).

    A timeout comes back as return code -9 with the reason in ``stderr``.
    """
    out = subprocess.DEVNULL if stdout_to_devnull else subprocess.PIPE
    cpu_before = _children_cpu()
    start = time.perf_counter()
    try:
        done = subprocess.run(
            list(argv),
            env=dict(env) if env is not None else None,
            cwd=cwd,
            stdout=out,
            stderr=subprocess.PIPE,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return Timed(time.perf_counter() - start, -9, b"", f"timed out after {timeout} s".encode())
    except OSError as exc:
        return Timed(time.perf_counter() - start, -1, b"", str(exc).encode())
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - cpu_before
    return Timed(seconds, done.returncode, done.stdout or b"", done.stderr or b"", cpu)


PYCACHE = CACHE / "pycache"


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus seri's variables and keys, plus ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SERI_", "OPENROUTER_", "OPENAI_", "ANTHROPIC_", "LLM_"))
    }
    env.update({"TZ": "UTC", "NO_COLOR": "1"})
    env.update(extra)
    return env


def seri_env(**extra: str) -> dict[str, str]:
    """``clean_env`` for running seri (and the interpreter floor) as an installed program.

    pip compiles an installed package's bytecode; an editable checkout in an environment
    with PYTHONDONTWRITEBYTECODE=1 recompiles every module on every start instead. The
    bytecode goes to .cache/bench/pycache (PYTHONPYCACHEPREFIX), never into the source tree.
    """
    env = clean_env(PYTHONPYCACHEPREFIX=str(PYCACHE), **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def failure_text(timed: Timed) -> str:
    """A one-line reason for a failed run, for the table."""
    lines = [line for line in timed.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    last = lines[-1].strip() if lines else ""
    return f"exit {timed.returncode}" + (f": {last[:80]}" if last else "")
