"""Row 4, recording: what trajectory recording adds per event during a real chat.

``seri chat -p`` runs against the loopback fake model, which asks for TOOL_CALLS glob
calls one turn at a time and then answers. The same chat runs with SERI_TRAJECTORY=on
and =off, back to back in pairs (the order alternating), each in a fresh profile. Each
pair's difference divided by the events recorded (rows in ``events``) is one sample of
the overhead per event; the median of the pairs is the figure. It is taken on the seri
process's CPU time (user + system), which other load on the machine barely moves; the
wall-clock figure is shown too. Recording adds no fsync of its own (events are written
in the conversation's transactions), so CPU is where it shows.

In-process, the recorder's own cost is also timed: ``Recorder.record`` of a typical event
and its share of ``flush_into`` (inside a transaction that is open anyway).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from scripts.bench.common import (
    LOAD_RUNS,
    REPO,
    SERI,
    failure_text,
    fmt_seconds,
    log,
    run_timed,
    seri_env,
    stat,
)
from scripts.bench.table import Row, met

TOOL_CALLS = 100
RUNS = 15
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


def _chat(work: Path, number: int, mode: str) -> tuple[float, float, int]:
    sys.path.insert(0, str(REPO))
    from scripts.fake_model import FakeModel

    home = work / f"rec-{mode}-{number}"
    project = work / "rec-project"
    (project / "pkg").mkdir(parents=True, exist_ok=True)
    for name in ("main.py", "pkg/util.py", "pkg/__init__.py"):
        (project / name).write_text("print('hi')\n")
    with FakeModel(_script()) as fake:
        env = seri_env(
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
    return timed.seconds, timed.cpu, events


def _in_process(work: Path) -> tuple[float, float]:
    """Seconds per event for Recorder.record and for its share of flush_into."""
    from scripts.bench.data import new_session, synthetic_header
    from seri.io.session.store import open_store
    from seri.io.trajectories.recorder import Recorder
    from seri.pure.trajectories.redaction import Redactor
    from seri.pure.trajectories.tool_events import ToolCallEvent, ToolResult

    store = open_store(work / "rec-inprocess")
    session_id = new_session(store, "/bench/project")
    recorder = Recorder(store, session_id, Redactor.of([KEY]), enabled=True)
    recorder.start(synthetic_header(session_id, recorder.run_id), time.time())
    events = 1000
    record_t, flush_t = [], []
    for _ in range(LOAD_RUNS):
        start = time.perf_counter()
        for i in range(events // 2):
            recorder.record(
                ToolCallEvent(id=f"call_{i}", name="glob", arguments='{"pattern":"**/*.py"}')
            )
            recorder.record(
                ToolResult(id=f"call_{i}", name="glob", ok=True, interrupted=False, bytes=40)
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
    wall: dict[str, list[float]] = {"on": [], "off": []}
    cpu: dict[str, list[float]] = {"on": [], "off": []}
    counts = []
    for number in range(RUNS):
        for mode in ("on", "off") if number % 2 == 0 else ("off", "on"):
            seconds, cpu_seconds, events = _chat(work, number, mode)
            wall[mode].append(seconds)
            cpu[mode].append(cpu_seconds)
            if mode == "on":
                counts.append(events)
    events = int(stat(counts).median)
    # Each pair ran back to back: the per-pair difference cancels slow spells on the machine.
    per_event = stat([(on - off) / events for on, off in zip(cpu["on"], cpu["off"], strict=True)])
    wall_per_event = stat(
        [(on - off) / events for on, off in zip(wall["on"], wall["off"], strict=True)]
    )
    record_s, flush_s = _in_process(work)
    return [
        Row(
            "4",
            f"recording overhead per event, `seri chat -p` with {TOOL_CALLS} glob calls "
            f"({events} events; n={RUNS} pairs on/off)",
            f"cpu {per_event.seconds()} per event (chat cpu on {stat(cpu['on']).seconds()}, off "
            f"{stat(cpu['off']).seconds()}); wall {wall_per_event.seconds()} per event; "
            f"in-process: `record` {fmt_seconds(record_s)} + `flush_into` {fmt_seconds(flush_s)} "
            "per event",
            "— (no peer records this way)",
            "none given; bench's own: cpu < 0.1 ms per event (median of pairs)",
            met(per_event.median < TARGET_PER_EVENT),
        )
    ]
