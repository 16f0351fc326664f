"""A scripted writer on seri's store API, for the several-process tests (S5, S7).

    python writer_child.py append HOME SESSION COUNT TAG
        COUNT read-then-write transactions through ``conversations.insert_messages`` (read
        ``next_seq``, insert at it, update the counters: BEGIN IMMEDIATE), one message each.
    python writer_child.py events HOME SESSION COUNT TAG
        COUNT trajectory events through the Recorder, each flushed in its own transaction.
    python writer_child.py deferred-proof HOME SESSION
        The regression seri's IMMEDIATE transactions prevent: a DEFERRED read-then-write on
        one connection while another connection commits fails at once with BusyError,
        whatever the busy timeout; the same through ``Store.write()`` waits and succeeds.

Prints one JSON object: what was done, BusyErrors met, the slowest transaction in seconds.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw

from scripts.bench.data import synthetic_header
from seri.io.session import conversations, session_table
from seri.io.session.store import open_store
from seri.io.trajectories.recorder import Recorder
from seri.pure.session.records import Message
from seri.pure.trajectories.redaction import Redactor
from seri.pure.trajectories.tool_events import ToolCallEvent


def append_latest(store: Any, session: str, messages: Any, now: float) -> int:
    """A second writer on purpose: the revision is read in the same IMMEDIATE transaction."""
    with store.write() as conn:
        revision = session_table.current_revision(conn, session)
        return conversations.insert_messages(conn, session, messages, now, revision=revision)


def append(home: Path, session: str, count: int, tag: str) -> dict[str, Any]:
    store = open_store(home)
    busy = done = 0
    slowest = 0.0
    for i in range(count):
        started = time.monotonic()
        try:
            append_latest(store, session, [Message(role="user", text=f"{tag} {i}")], time.time())
            done += 1
        except apsw.BusyError:
            busy += 1
        slowest = max(slowest, time.monotonic() - started)
    store.close()
    return {"done": done, "busy": busy, "slowest": slowest}


def record_events(home: Path, session: str, count: int, tag: str) -> dict[str, Any]:
    store = open_store(home)
    recorder = Recorder(store, session, Redactor(), enabled=True)
    recorder.start(synthetic_header(session, recorder.run_id, model=tag), time.time())
    busy = done = 0
    slowest = 0.0
    for i in range(count):
        started = time.monotonic()
        recorder.record(ToolCallEvent(id=f"{tag}-{i}", name="glob", arguments=json.dumps({"n": i})))
        try:
            recorder.flush()
            done += 1
        except apsw.BusyError:
            busy += 1
        slowest = max(slowest, time.monotonic() - started)
    store.close()
    return {"done": done, "busy": busy, "slowest": slowest}


def deferred_proof(home: Path, session: str) -> dict[str, Any]:
    other = open_store(home)
    plain = apsw.Connection(str(other.path))
    plain.set_busy_timeout(5_000)
    # DEFERRED: the read takes a snapshot; another connection commits; the write must
    # upgrade a snapshot that is no longer the latest, which waiting cannot fix.
    plain.execute("BEGIN DEFERRED")
    plain.execute("SELECT next_seq FROM sessions WHERE id = ?", (session,)).fetchall()
    append_latest(other, session, [Message(role="user", text="between")], 1.0)
    started = time.monotonic()
    deferred_error = ""
    try:
        plain.execute("UPDATE sessions SET turns_used = turns_used + 1 WHERE id = ?", (session,))
    except apsw.BusyError as exc:
        deferred_error = type(exc).__name__
    deferred_seconds = time.monotonic() - started
    plain.execute("ROLLBACK")
    plain.close()

    # The same interleaving through seri's Store.write(): the other writer waits for us.
    ours = open_store(home)
    waited: dict[str, Any] = {}

    def competitor() -> None:
        begun = time.monotonic()
        try:
            append_latest(other, session, [Message(role="user", text="x")], 2.0)
            waited["ok"] = True
        except apsw.BusyError:
            waited["ok"] = False
        waited["seconds"] = time.monotonic() - begun

    with ours.write() as conn:
        conn.execute("SELECT next_seq FROM sessions WHERE id = ?", (session,)).fetchall()
        thread = threading.Thread(target=competitor)
        thread.start()
        time.sleep(0.3)
        conn.execute("UPDATE sessions SET turns_used = turns_used + 1 WHERE id = ?", (session,))
    thread.join()
    return {
        "deferred_error": deferred_error,
        "deferred_seconds": deferred_seconds,
        "immediate_competitor_ok": waited.get("ok"),
        "immediate_competitor_waited": waited.get("seconds"),
        "transaction_mode": ours.connection.transaction_mode,
    }


def main() -> int:
    mode, home, session = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if mode == "append":
        result = append(home, session, int(sys.argv[4]), sys.argv[5])
    elif mode == "events":
        result = record_events(home, session, int(sys.argv[4]), sys.argv[5])
    else:
        result = deferred_proof(home, session)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
