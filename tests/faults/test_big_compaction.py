"""S11, S12: compacting a long stored history holds the write lock for a moment, not minutes.

A compaction walls the evicted messages off in one short write; a purge deletes them after,
a short transaction at a time (seri/io/compaction/eviction_purge.py). One DELETE of every evicted
message, each costing its FTS5 secure-delete, once held the lock for ~200 s at 100,000
messages (and for seconds at the 2,000 here). While ``seri chat --resume`` compacts such a
session, another connection (scripts/lock_probe.py) writes and reads over and over: none of
its writes may wait a second. SIGKILL at random moments of the same run (during the
compaction, the turn, the purge) leaves a store whose integrity, search index and counters
hold, whose conversation is the old one or the recap and its tail, and whose walled-off rows
the next run goes on purging.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from scripts.bench.data import iter_history, new_session
from scripts.fake_model import FakeModel
from scripts.lock_probe import LockProbe
from seri.io.compaction.eviction_purge import merge_pending, purge_step, run_purge
from seri.io.session import conversations
from seri.io.session.store import open_store
from seri.pure.session.records import Message
from tests.faults.ledger import FaultLedger
from tests.faults.support import (
    chat_env,
    check_store,
    copy_profile,
    database,
    rng_for,
    rows,
    run,
    scalar,
    seri,
    start,
)

MESSAGES = 1_200  # ~1 MB of history: a compaction evicts nearly all of it at the default window


MARKER = "qqzanzibarquux"  # a word only the first (evicted) message holds


def _big_session(home: Path, project: Path) -> str:
    store = open_store(home)
    session_id = new_session(store, str(project))
    # (The fake summarizer takes the first line of the first message for the goal.)
    first = Message(role="user", text=f"A task.\nRemember the word {MARKER} for later.")
    history = [first, *iter_history(MESSAGES - 1)]
    conversations.append_messages(store, session_id, history, 1_750_000_000.0, revision=0)
    with store.write() as conn:  # the title, taken from the first message, would keep it
        conn.execute("UPDATE sessions SET title = 'a long session' WHERE id = ?", (session_id,))
    store.close()
    return session_id


def _marker_in_file(home: Path) -> bool:
    """Whether the marker is in the file: as a message, or as a term of the search index
    (whose leaves store a term after the prefix it shares with the one before)."""
    with database(home) as conn:
        index = b"".join(block for (block,) in rows(conn, "SELECT block FROM message_search_data"))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return MARKER[4:].encode() in index or MARKER.encode() in (home / "seri.db").read_bytes()


def _below_wall(home: Path, session_id: str) -> int:
    with database(home) as conn:
        return int(
            scalar(
                conn,
                "SELECT count(*) FROM messages WHERE session_id = ?"
                " AND seq < (SELECT compacted_before FROM sessions WHERE id = ?)",
                (session_id, session_id),
            )
        )


def _search_hits(home: Path, project: Path, text: str) -> list[dict[str, Any]]:
    found = run(
        seri("sessions", "search", text, "--json", "--limit", "500"), home=home, cwd=project
    )
    assert found.returncode in (0, 1), found.stderr
    return [json.loads(line) for line in found.stdout.splitlines()]


def _purge_all(home: Path, session_id: str) -> None:
    store = open_store(home)
    try:
        run_purge(store, session_id, pause=0)
    finally:
        store.close()


def test_S11_resume_and_compaction_never_hold_the_lock_for_a_second(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    session_id = _big_session(seri_home, project)
    assert _marker_in_file(seri_home)
    fault_ledger.injected("S11")
    with (
        FakeModel([{"text": "continued"}], auto_recap=True) as fake,
        LockProbe(seri_home / "seri.db") as probe,
    ):
        ran = run(
            seri("chat", "--resume", session_id, "-p", "continue"),
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
        )
    assert ran.returncode == 0, ran.stderr
    assert "compacted" in ran.stderr
    assert probe.error is None
    assert probe.writes > 10, "the probe wrote all along"
    assert probe.longest_write_wait < 1.0, f"a writer waited {probe.longest_write_wait:.2f} s"
    assert probe.longest_read < 1.0
    live = check_store(seri_home)[session_id]
    assert live[0].kind == "recap"
    assert len(live) < 100
    # What the compaction walled off is out of the conversation and out of search, purged
    # or not yet.
    with database(seri_home) as conn:
        wall = scalar(conn, "SELECT compacted_before FROM sessions WHERE id = ?", (session_id,))
    hits = _search_hits(seri_home, project, "skip rows that are not ok")
    assert hits, "the kept tail still has task messages"
    assert all(hit["seq"] >= wall for hit in hits)
    assert not _search_hits(seri_home, project, MARKER)
    _purge_all(seri_home, session_id)
    assert _below_wall(seri_home, session_id) == 0
    # A bulk purge (no row-by-row secure-delete) merged the index after: the words of the
    # evicted messages are nowhere in the file, index included.
    with database(seri_home) as conn:
        assert not merge_pending(conn)
    assert not _marker_in_file(seri_home)
    with database(seri_home) as conn:
        assert (
            scalar(
                conn,
                "SELECT count(*) FROM message_text WHERE session_id = ? AND seq < ?",
                (session_id, wall),
            )
            == 0
        )
    assert check_store(seri_home)[session_id] == live
    fault_ledger.survived("S11")


def _old_or_recap_and_tail(live: list[Message], original: list[Message]) -> None:
    """The old conversation, or a recap, the end of the old one, and what the run added."""
    if live[: len(original)] == original:
        return
    assert live[0].kind == "recap"
    first = original.index(live[1])
    kept = original[first:]
    assert live[1 : 1 + len(kept)] == kept


def _kill_at_random(
    home: Path, project: Path, session_id: str, delay: float
) -> subprocess.CompletedProcess[str] | None:
    """The resume, killed ``delay`` s after it says it compacted (None: it finished first)."""
    steps = [{"text": "continued", "drip_interval": 0.002}]
    with FakeModel(steps, auto_recap=True) as fake:
        proc = start(
            seri("chat", "--resume", session_id, "-p", "continue"),
            home=home,
            cwd=project,
            env=chat_env(fake),
        )
        assert proc.stderr is not None
        for line in proc.stderr:
            if "compacted" in line:
                break
        time.sleep(delay)
        if proc.poll() is not None:
            proc.communicate()
            return None
        os.kill(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, stderr
    return subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr)


def test_S12_kill_during_compaction_and_purge(
    project: Path, seri_home: Path, tmp_path: Path, fault_ledger: FaultLedger
) -> None:
    rng = rng_for("S12", fault_ledger)
    session_id = _big_session(seri_home, project)
    original = check_store(seri_home)[session_id]
    for attempt in range(3):
        home = tmp_path / f"copy{attempt}"
        copy_profile(seri_home, home)
        fault_ledger.injected("S12")
        killed = _kill_at_random(home, project, session_id, rng.uniform(0.0, 0.4))
        live = check_store(home)[session_id]
        _old_or_recap_and_tail(live, original)
        left = _below_wall(home, session_id)
        # The next run carries on: it resumes what is there, and its purge goes on.
        with FakeModel([{"text": "next"}], auto_recap=True) as fake:
            again = run(
                seri("chat", "--resume", session_id, "-p", "next"),
                home=home,
                cwd=project,
                env=chat_env(fake),
            )
        assert again.returncode == 0, again.stderr
        after = check_store(home)[session_id]
        assert after[0].kind == "recap"
        store = open_store(home)
        try:
            for _ in range(3):
                purge_step(store, session_id, budget=0.02)
        finally:
            store.close()
        assert _below_wall(home, session_id) < left or left == 0
        assert check_store(home)[session_id] == after
        print(f"S12 attempt {attempt}: killed={killed is not None}, {left} rows below the wall")
        fault_ledger.survived("S12")
