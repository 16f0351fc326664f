"""`make bench`: seri against its peers and the physical floor, in one table.

    .venv/bin/python scripts/bench/run.py [--keep]

Installs the peers into .cache/bench/ on first use (npm: @openai/codex,
@anthropic-ai/claude-code, opencode-ai; PyPI: llm in its own venv), generates its own
data in a temporary directory, and prints one table, also written as Markdown to
bench-results/bench.md, with the per-call plot in bench-results/per_call.png and the
side-by-side spawn-to-first-request-byte table in bench-results/first-byte.md.
A peer that cannot be installed or run makes its rows say "peer unavailable".
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench import (
    compaction,
    export,
    first_byte,
    fold,
    peers,
    per_call,
    prompt_cache,
    recording,
    resume,
    startup,
)
from scripts.bench.common import LOAD_RUNS, RESULTS, STARTUP_RUNS, log
from scripts.bench.fixtures import Fixtures
from scripts.bench.table import Row, render_markdown, render_text

TITLE = "seri benchmarks"


def _guarded(group: str, name: str, action: Callable[[], list[Row]]) -> list[Row]:
    """A section that breaks becomes one row saying so; the rest still runs."""
    try:
        return action()
    except Exception as exc:
        traceback.print_exc()
        reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
        return [Row(group, name, f"error: {reason}", "", "", "no")]


def _load() -> str:
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return "?"
    return f"{one:.2f}/{five:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    args = parser.parse_args()
    started = time.perf_counter()
    load_before = _load()
    work = Path(tempfile.mkdtemp(prefix="seri-bench-"))
    log(f"data in {work}")
    notes: list[str] = []
    rows: list[Row] = []
    try:
        programs = peers.install_all()
        installed = time.perf_counter() - started
        fixtures = Fixtures(work)
        rows += _guarded("1", "start-up", lambda: startup.run(programs, work))
        rows += _guarded("1b", "first request byte", lambda: first_byte.run(programs, work))
        rows += _guarded("2", "resume", lambda: resume.run(fixtures))
        # Compaction before per-call: per-call appends a few messages to the shared sessions.
        compaction_rows = _guarded("6", "compaction", lambda: compaction.run(fixtures))
        rows += _guarded("3", "per model call", lambda: per_call.run(fixtures))
        rows += _guarded("4", "recording", lambda: recording.run(work))
        rows += _guarded("5", "export", lambda: export.run(work))
        rows += compaction_rows
        rows += _guarded("6b", "fold", fold.run)
        rows += _guarded("7", "prompt cache", prompt_cache.run)
        try:
            notes.append(resume.breakdown(fixtures))
        except Exception as exc:
            notes.append(f"Resume breakdown failed: {exc}")
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    wall = time.perf_counter() - started
    unavailable = [f"{p.name}: {p.problem}" for p in programs.values() if not p.available]
    notes[:0] = [
        "Cells are median (spread); the spread is p10–p90 with 10 or more runs "
        f"(start-up: n={STARTUP_RUNS}), else min–max (n={LOAD_RUNS} for big loads). "
        "Start-up times are wall clock from spawn to exit, after one warm-up run; peers run "
        "with HOME and XDG dirs in a fresh temporary directory; seri and the floor run with "
        "their bytecode cached in .cache/bench/pycache (PYTHONPYCACHEPREFIX), as after a pip "
        "install. In-process figures (rows 3 and 6) are CPU time, except storing (wall: it "
        "waits for fsync). 'no (cpu: yes)' means wall time missed the target, CPU time met it.",
        f"Peers: {peers.describe_install() or 'npm peers not installed'}; llm from PyPI in "
        f"{peers.LLM_VENV}." + (f" Unavailable: {'; '.join(unavailable)}." if unavailable else ""),
        "History data: tasks of 10 messages (prompt, 4 × assistant+tool call and result, answer), "
        "tool results of 180–4,800 chars; about 930 bytes of stored JSON a message.",
        f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"load average (1/5 min) {load_before} at start, {_load()} at end; "
        "other processes on the machine add noise to every figure.",
        f"Wall time {wall:.0f} s (peer installs/checks {installed:.0f} s).",
    ]
    print(render_text(rows, notes), end="")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench.md").write_text(render_markdown(rows, TITLE, notes), encoding="utf-8")
    log(f"wrote {RESULTS / 'bench.md'} and {RESULTS / 'per_call.png'} in {wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
