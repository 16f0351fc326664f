"""Row 2, resume: load a long session in a fresh process, against parsing the same JSONL.

seri's side is ``open_store`` + ``load_state`` + ``load_messages`` (what ``--resume``
does before the first model call). The comparison is what Codex and Claude Code do: read
the session's JSONL file and ``json.loads`` every line, with the same bodies as seri
stores. Both sides are timed inside the child, after imports, so the interpreter's start
is not counted. Memory: the growth of peak RSS over the baseline after imports, and
the peak of Python allocations under tracemalloc (one extra, untimed run).
"""

from __future__ import annotations

import json
from pathlib import Path

from scripts.bench.common import (
    LOAD_RUNS,
    PYTHON,
    fmt_bytes,
    fmt_seconds,
    log,
    run_timed,
    seri_env,
    stat,
)
from scripts.bench.fixtures import Fixtures
from scripts.bench.table import Row, met, met_wall

SIZES = (1_000, 10_000, 100_000)
CHILD = str(Path(__file__).with_name("resume_child.py"))


def _child(*args: str) -> dict[str, float]:
    timed = run_timed([PYTHON, CHILD, *args], env=seri_env(), timeout=120)
    if timed.returncode != 0:
        raise RuntimeError(f"resume child failed: {timed.stderr.decode()[-400:]}")
    result: dict[str, float] = json.loads(timed.stdout)
    return result


def breakdown(fixtures: Fixtures) -> str:
    """A note: how seri's resume at the largest size divides between its three steps."""
    made = fixtures.history(SIZES[-1])
    parts = [_child("seri-parts", str(made.home), made.session_id) for _ in range(3)]
    medians = {key: stat([p[key] for p in parts]).median for key in ("sqlite", "json", "structure")}
    total = sum(medians.values())
    shown = ", ".join(
        f"{name} {seconds * 1e3:.0f} ms ({seconds / total:.0%})"
        for name, seconds in medians.items()
    )
    return (
        f"Resume at {SIZES[-1]:,} messages, where load_messages spends its time (median of 3): "
        f"{shown}; sqlite = fetching the body rows, json = json.loads per row, "
        "structure = cattrs building the Message records."
    )


def _side(runs: list[dict[str, float]], traced: dict[str, float]) -> str:
    wall = stat([r["seconds"] for r in runs])
    cpu = stat([r["cpu"] for r in runs]).median
    rss = stat([r["rss_bytes"] for r in runs]).median
    return (
        f"{wall.seconds()}; cpu {fmt_seconds(cpu)}; peak RSS +{fmt_bytes(rss)}, "
        f"heap peak {fmt_bytes(traced['heap_peak'])}"
    )


def run(fixtures: Fixtures) -> list[Row]:
    rows = []
    for size in SIZES:
        made = fixtures.history(size)
        log(f"resume: {size:,} messages, {LOAD_RUNS} runs each side")
        seri_args = ("seri", str(made.home), made.session_id)
        jsonl_args = ("jsonl", str(made.jsonl))
        seri_runs, jsonl_runs = [], []
        for _ in range(LOAD_RUNS):
            seri_runs.append(_child(*seri_args))
            jsonl_runs.append(_child(*jsonl_args))
        assert all(r["messages"] == size for r in seri_runs + jsonl_runs)
        seri_traced, jsonl_traced = _child(*seri_args, "--trace"), _child(*jsonl_args, "--trace")
        seri_wall = stat([r["seconds"] for r in seri_runs]).median
        ratio = seri_wall / stat([r["seconds"] for r in jsonl_runs]).median
        target = "< 1 s" if size == 100_000 else "(target is at 100k)"
        seri_cpu = stat([r["cpu"] for r in seri_runs]).median
        verdict = met_wall(seri_wall < 1.0, seri_cpu < 1.0) if size == 100_000 else met(None)
        rows.append(
            Row(
                "2",
                f"resume {size:,} messages (db {fmt_bytes(made.db_bytes)}, n={LOAD_RUNS})",
                _side(seri_runs, seri_traced),
                f"JSONL {fmt_bytes(made.jsonl_bytes)}, json.loads per line: "
                f"{_side(jsonl_runs, jsonl_traced)}; seri {ratio:.1f}× its time",
                target,
                verdict,
            )
        )
    return rows
