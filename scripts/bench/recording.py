"""Row 4, recording: what trajectory recording adds per event during a real chat.

``seri chat -p`` runs against the loopback fake model, which asks for TOOL_CALLS glob
calls one turn at a time and then answers. The same chat runs with SERI_TRAJECTORY=on
and =off, alternating, each in a fresh profile; the difference of the medians divided by
the events recorded (rows in ``events``) is the overhead per event.

In-process, the recorder's own cost is also timed: ``Recorder.record`` of a typical event
and its share of ``flush_into`` (inside a transaction that is open anyway).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from scripts.bench.common import (
    LOAD_RUNS,
    REPO,
    SERI,
    clean_env,
    failure_text,
    fmt_seconds,
    log,
    run_timed,
    stat,
)
from scripts.bench.table import Row, met

TOOL_CALLS = 40
RUNS = max(LOAD_RUNS, 7)
KEY = "sk-or-v1-" + "ab12" * 16
TARGET_PER_EVENT = 1e-4  # the bench's own target: 0.1 ms an event


def _script() -> list[dict[str, object]]:
    fast = {"piece_chars": 256, "split_bytes": 65536}
    return [
        {
            "tool_calls": [{"name": "glob", "arguments": {"pattern": "**/*.py"}}],
            "repeat": TOOL_CALLS,
            **fast,
        },
        {"text": "There are three Python files.", **fast},
    ]


def _count_events(home: Path) -> int:
    import apsw

    conn = apsw.Connection(str(home / "seri.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("SELECT count(*) FROM events").fetchall()[0][0])
    finally:
        conn.close()


def _chat(work: Path, number: int, mode: str) -> tuple[float, int]:
    sys.path.insert(0, str(REPO))
    from scripts.fake_model import FakeModel

    home = work / f"rec-{mode}-{number}"
    project = work / "rec-project"
    (project / "pkg").mkdir(parents=True, exist_ok=True)
    for name in ("main.py", "pkg/util.py", "pkg/__init__.py"):
        (project / name).write_text("print('hi')\n")
    with FakeModel(_script()) as fake:
        env = clean_env(
            SERI_HOME=str(home),
            SERI_BASE_URL=fake.base_url,
            OPENROUTER_API_KEY=KEY,
            SERI_TRAJECTORY=mode,
        )
        timed = run_timed(
            [SERI, "chat", "-p", "list the python files"], env=env, cwd=project, timeout=120
        )
        served = len(fake.requests)
    if timed.returncode != 0 or served != TOOL_CALLS + 1:
        raise RuntimeError(f"seri chat failed ({served} model calls): {failure_text(timed)}")
    events = _count_events(home) if mode == "on" else 0
    return timed.seconds, events


def _in_process(work: Path) -> tuple[float, float]:
    """Seconds per event for Recorder.record and for its share of flush_into."""
    from scripts.bench.data import new_session
    from seri.io.recorder import Recorder
    from seri.io.store import open_store
    from seri.pure.redaction import Redactor

    store = open_store(work / "rec-inprocess")
    session_id = new_session(store, "/bench/project")
    recorder = Recorder(store, session_id, Redactor.of([KEY]), enabled=True)
    recorder.start({"model": "bench/fake-model", "sampling": {}, "prompt_hashes": {}}, time.time())
    events = 1000
    record_t, flush_t = [], []
    for _ in range(LOAD_RUNS):
        start = time.perf_counter()
        for i in range(events // 2):
            recorder.record(
                "tool_call",
                {"id": f"call_{i}", "name": "glob", "arguments": '{"pattern":"**/*.py"}'},
            )
            recorder.record(
                "tool_result",
                {"id": f"call_{i}", "name": "glob", "ok": True, "interrupted": False, "bytes": 40},
            )
        record_t.append((time.perf_counter() - start) / events)
        with store.write() as conn:
            start = time.perf_counter()
            recorder.flush_into(conn)
            flush_t.append((time.perf_counter() - start) / events)
    store.close()
    return stat(record_t).median, stat(flush_t).median


def run(work: Path) -> list[Row]:
    log(f"recording: {RUNS} chats each with SERI_TRAJECTORY=on and off ({TOOL_CALLS} tool calls)")
    on, off, counts = [], [], []
    for number in range(RUNS):
        order = ("on", "off") if number % 2 == 0 else ("off", "on")
        for mode in order:
            seconds, events = _chat(work, number, mode)
            (on if mode == "on" else off).append(seconds)
            if mode == "on":
                counts.append(events)
    on_s, off_s = stat(on), stat(off)
    events = int(stat(counts).median)
    per_event = (on_s.median - off_s.median) / events
    # The spread of the difference, from the spreads of the two sides.
    low = (on_s.low - off_s.high) / events
    high = (on_s.high - off_s.low) / events
    record_s, flush_s = _in_process(work)
    os.environ.pop("SERI_TRAJECTORY", None)
    return [
        Row(
            "4",
            f"recording overhead per event, `seri chat -p` with {TOOL_CALLS} glob calls "
            f"({events} events; n={RUNS} each way)",
            f"{fmt_seconds(per_event)} per event ({fmt_seconds(low, unit_of=per_event)}–"
            f"{fmt_seconds(high, unit_of=per_event)}); "
            f"chat on {on_s.seconds()} vs off {off_s.seconds()}; "
            f"in-process: record {fmt_seconds(record_s)} + flush {fmt_seconds(flush_s)} per event",
            "— (no peer records this way)",
            "none given; bench's own: < 0.1 ms per event",
            met(per_event < TARGET_PER_EVENT),
        )
    ]
