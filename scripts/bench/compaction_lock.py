"""The store's write lock while a huge session is resumed and compacted (issue 25).

Builds one session of ``--messages`` messages (100,000 by default, about 900 bytes each, the
bench's usual history) and runs ``seri chat --resume ID -p continue`` on it at the default
window against the loopback fake (which answers the summarizer itself), while a probe
(scripts/lock_probe.py) takes the write lock and reads over and over from another
connection. Reported: the longest wait of that other writer and reader (about the longest
time seri held the lock), the run's wall time, and then the purge of the evicted rows run to
its end (at most ``--purge-seconds``): how long its longest step held the lock and how long
it took in all, the search index's merge included.

    .venv/bin/python -m scripts.bench.compaction_lock [--messages N] [--work DIR]

The session is built once into ``--work`` (default .cache/bench/compaction-lock) and copied
for each run: building 100,000 messages takes about a minute.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import time
from pathlib import Path

from scripts.bench.common import SERI, log, seri_env
from scripts.bench.data import store_with_history
from scripts.fake_model import FakeModel
from scripts.lock_probe import LockProbe
from seri.io.compaction.eviction_purge import merge_step, purge_step
from seri.io.session.store import Store, open_store

REPO = Path(__file__).resolve().parents[2]
PROJECT = "/bench/project"


def build(work: Path, count: int) -> tuple[Path, str]:
    """The profile holding one session of ``count`` messages (built once, then reused)."""
    home = work / f"history-{count}"
    marker = home / "session-id"
    if not marker.exists():
        shutil.rmtree(home, ignore_errors=True)
        start = time.perf_counter()
        store, session_id = store_with_history(home, count, project=PROJECT)
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.close()
        marker.write_text(session_id)
        log(f"built {count:,} messages in {time.perf_counter() - start:.0f} s")
    return home, marker.read_text()


def resume(home: Path, session_id: str, project: Path) -> dict[str, float]:
    """``seri chat --resume`` with the probe running; what the probe saw."""
    with FakeModel([{"text": "continued"}], auto_recap=True) as fake:
        env = seri_env(
            SERI_HOME=str(home),
            SERI_BASE_URL=fake.base_url,
            OPENROUTER_API_KEY="sk-or-v1-" + "be7c" * 16,
            SERI_MODEL="fake/model",
        )
        with LockProbe(home / "seri.db") as probe:
            start = time.perf_counter()
            ran = subprocess.run(
                [SERI, "chat", "--resume", session_id, "-p", "continue"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=1800,
                check=False,
            )
            wall = time.perf_counter() - start
    if ran.returncode != 0 or probe.error is not None:
        raise RuntimeError(f"resume failed: {ran.stderr[-800:]} {probe.error!r}")
    return {
        "resume_seconds": wall,
        "longest_write_wait": probe.longest_write_wait,
        "longest_read": probe.longest_read,
        "probe_writes": probe.writes,
    }


def _evicted(store: Store, session_id: str) -> int:
    rows = store.connection.execute(
        "SELECT count(*) FROM messages WHERE session_id = ?"
        " AND seq < (SELECT compacted_before FROM sessions WHERE id = ?)",
        (session_id, session_id),
    ).fetchall()
    return int(rows[0][0])


def purge(home: Path, session_id: str, limit: float) -> dict[str, float]:
    """The rest of the purge step by step, as the purge thread runs them (without its
    pauses), for at most ``limit`` seconds: the evicted rows, then the index merge."""
    store = open_store(home)
    try:
        left = _evicted(store, session_id)
        timings: dict[str, list[float]] = {"purge": [], "merge": []}
        start = time.perf_counter()
        for phase, step in (
            ("purge", lambda: purge_step(store, session_id)),
            ("merge", lambda: merge_step(store)),
        ):
            more = True
            while more and time.perf_counter() - start < limit:
                began = time.perf_counter()
                more = step()
                timings[phase].append(time.perf_counter() - began)
        purged = left - _evicted(store, session_id)
    finally:
        store.close()
    return {
        "evicted_left_at_exit": left,
        "purged_rows": purged,
        "purge_steps": len(timings["purge"]),
        "purge_seconds": sum(timings["purge"]),
        "purge_longest_step": max(timings["purge"], default=0.0),
        "merge_steps": len(timings["merge"]),
        "merge_seconds": sum(timings["merge"]),
        "merge_longest_step": max(timings["merge"], default=0.0),
        "finished": not more,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--purge-seconds", type=float, default=600.0)
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "bench" / "compaction-lock")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    source, session_id = build(args.work, args.messages)
    home = args.work / "run"
    shutil.rmtree(home, ignore_errors=True)
    shutil.copytree(source, home)
    project = args.work / "project"
    project.mkdir(exist_ok=True)
    result = {"messages": args.messages, **resume(home, session_id, project)}
    result.update(purge(home, session_id, args.purge_seconds))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
