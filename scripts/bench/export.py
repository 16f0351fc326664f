"""Row 5, export: ``seri trajectory export`` against ``sqlite3 -json`` on the same database.

100,000 events (100 runs of 1,000, over 10 sessions) are written through the real
``Recorder``, with bodies of about 200 bytes shaped like a chat's tool calls, tool
results and model calls. Both commands write to /dev/null; throughput is the bytes each
writes (counted once, through a pipe) over its median time.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from scripts.bench.common import (
    LOAD_RUNS,
    SERI,
    failure_text,
    fmt_bytes,
    log,
    run_timed,
    seri_env,
    stat,
)
from scripts.bench.table import Row, met
from seri.pure.session.records import Usage
from seri.pure.trajectories import events, tool_events
from seri.pure.trajectories.event_record import Event

SESSIONS, RUNS_PER_SESSION, EVENTS_PER_RUN = 10, 10, 1000
EVENTS = SESSIONS * RUNS_PER_SESSION * EVENTS_PER_RUN
KEY = "sk-or-v1-" + "ab12" * 16


def _event(i: int) -> Event:
    kind = i % 3
    if kind == 0:
        return tool_events.ToolCallEvent(
            id=f"call_{i:08d}",
            name="edit",
            arguments='{"path":"src/handlers/item_'
            + str(i % 977)
            + '.py","old_string":"    return rows\\n",'
            '"new_string":"    return [row for row in rows if row.ok]\\n"}',
        )
    if kind == 1:
        return tool_events.ToolResult(
            id=f"call_{i - 1:08d}",
            name="edit",
            ok=i % 17 != 0,
            interrupted=False,
            bytes=120 + i % 5000,
            text=f"replaced 1 occurrence in src/handlers/item_{i % 977}.py; 0 others left",
        )
    return events.ModelCall(
        finish_reason="tool_calls",
        usage=Usage(
            input_tokens=12000 + i % 9000,
            output_tokens=80 + i % 400,
            cached_tokens=11000,
            cost=0.00123,
            provider="FakeProvider",
        ),
        tool_calls=1,
        model="bench/fake-model",
        generation_id=f"gen-{i}",
    )


def build(home: Path) -> int:
    """Write the events; returns the average body's bytes."""
    from scripts.bench.data import new_session, synthetic_header
    from seri.io.session.store import open_store
    from seri.io.trajectories.recorder import Recorder
    from seri.pure.trajectories.redaction import Redactor

    store = open_store(home)
    redactor = Redactor.of([KEY])
    number = 0
    at = 1_750_000_000.0
    for _ in range(SESSIONS):
        session_id = new_session(store, "/bench/project", now=at)
        for _ in range(RUNS_PER_SESSION):
            recorder = Recorder(store, session_id, redactor, enabled=True)
            recorder.start(synthetic_header(session_id, recorder.run_id, started=at), at)
            for _ in range(EVENTS_PER_RUN):
                recorder.record(_event(number), at=at)
                number += 1
                at += 0.5
            recorder.flush()
    avg = store.connection.execute("SELECT avg(length(body)) FROM events").fetchall()[0][0]
    store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return round(avg)


def run(work: Path) -> list[Row]:
    home = work / "export-home"
    log(f"export: writing {EVENTS:,} events through the Recorder")
    body_bytes = build(home)
    db = home / "seri.db"
    sqlite3 = shutil.which("sqlite3")
    seri_argv = [SERI, "trajectory", "export"]
    env = seri_env(SERI_HOME=str(home))
    db_size = fmt_bytes(db.stat().st_size)
    what = f"export {EVENTS:,} events (bodies ~{body_bytes} B, db {db_size}; n={LOAD_RUNS})"
    probe = run_timed(seri_argv, env=env, timeout=300)
    if probe.returncode != 0:
        return [
            Row(
                "5",
                what,
                f"`seri trajectory export` failed: {failure_text(probe)}",
                "",
                "within 1.5× of sqlite3 -json",
                met(False),
            )
        ]
    seri_bytes = len(probe.stdout)
    lines = probe.stdout.count(b"\n")
    sqlite_bytes = 0
    if sqlite3:
        sqlite_argv = [sqlite3, "-json", str(db), "select * from events"]
        probe_sql = run_timed(sqlite_argv, env=env, timeout=300)
        if probe_sql.returncode == 0:
            sqlite_bytes = len(probe_sql.stdout)
        else:
            sqlite3 = None
    log(f"export: {LOAD_RUNS} runs each of seri trajectory export and sqlite3 -json")
    seri_t, sqlite_t = [], []
    for _ in range(LOAD_RUNS):
        seri_t.append(run_timed(seri_argv, env=env, timeout=300, stdout_to_devnull=True).seconds)
        if sqlite3:
            sqlite_t.append(
                run_timed(sqlite_argv, env=env, timeout=300, stdout_to_devnull=True).seconds
            )
    seri_s = stat(seri_t)
    seri_rate = seri_bytes / seri_s.median / 1e6
    seri_cell = (
        f"{seri_s.seconds()}; {seri_rate:.0f} MB/s ({fmt_bytes(seri_bytes)}, {lines:,} lines)"
    )
    if not sqlite3:
        return [
            Row(
                "5",
                what,
                seri_cell,
                "sqlite3 CLI unavailable",
                "within 1.5× of sqlite3 -json",
                met(None),
            )
        ]
    sql_s = stat(sqlite_t)
    ratio = seri_s.median / sql_s.median
    return [
        Row(
            "5",
            what,
            seri_cell,
            f"`sqlite3 -json … 'select * from events'`: {sql_s.seconds()}; "
            f"{sqlite_bytes / sql_s.median / 1e6:.0f} MB/s ({fmt_bytes(sqlite_bytes)}); "
            f"seri {ratio:.2f}× its time",
            "within 1.5× of sqlite3 -json",
            met(ratio <= 1.5),
        ),
    ]
