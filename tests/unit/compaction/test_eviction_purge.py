"""The purge of walled-off messages (seri/io/compaction/eviction_purge.py) on a real store: it runs
to its end, on its own thread, while another connection writes and reads all along without
waiting a second; small purges delete row by row with secure-delete, big ones in bulk and
then merge the search index."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import apsw
import pytest

from scripts.bench.data import store_with_history
from scripts.lock_probe import LockProbe
from seri.io.compaction.eviction_purge import (
    SECURE_ROWS,
    EvictionPurge,
    evicted_left,
    merge_pending,
    stop_all,
)
from seri.io.session.store import open_store


def _walled(home: Path, messages: int, kept: int) -> str:
    """A session of ``messages`` whose all but ``kept`` newest are below its wall."""
    store, session_id = store_with_history(home, messages)
    with store.write() as conn:
        conn.execute(
            "UPDATE sessions SET compacted_before = ? + 1, message_count = ? WHERE id = ?",
            (messages - kept, kept, session_id),
        )
    store.close()
    return session_id


@pytest.mark.parametrize("messages", [SECURE_ROWS // 2, 1_500])
def test_the_purge_runs_to_its_end_and_lets_other_writers_in(tmp_path: Path, messages: int) -> None:
    session_id = _walled(tmp_path, messages, kept=10)
    db = tmp_path / "seri.db"
    with LockProbe(db) as probe:
        purge = EvictionPurge(db, session_id)
        purge.start()
        purge.wait(300)
    assert probe.error is None
    # A small purge is a few row-by-row steps, over before the probe writes ten times; the
    # big one runs long enough that a probe shut out by it would show.
    assert probe.writes > (10 if messages > SECURE_ROWS else 0)
    # Steps back to back would starve a waiting writer (SQLite's lock is not fair).
    assert probe.longest_write_wait < 1.0, f"a writer waited {probe.longest_write_wait:.2f} s"
    store = open_store(tmp_path)
    try:
        conn = store.connection
        assert not evicted_left(conn, session_id)
        assert not merge_pending(conn)
        live = conn.execute(
            "SELECT count(*) FROM messages WHERE session_id = ?", (session_id,)
        ).fetchall()
        assert live == [(10,)]
        texts = conn.execute(
            "SELECT count(*) FROM message_text WHERE session_id = ?", (session_id,)
        ).fetchall()
        assert texts == [(10,)]
        conn.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
        # secure-delete is on again for everyone else (a bulk purge turns it off only inside
        # its own transactions).
        conn.execute(
            "DELETE FROM messages WHERE session_id = ? AND seq = ?", (session_id, messages)
        )
        conn.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
        config = dict(conn.execute("SELECT k, v FROM message_search_config").fetchall())
        assert config.get("secure-delete") == 1
    finally:
        store.close()


def test_a_stopped_purge_leaves_a_whole_store_for_the_next(tmp_path: Path) -> None:
    session_id = _walled(tmp_path, 1_500, kept=10)
    db = tmp_path / "seri.db"
    purge = EvictionPurge(db, session_id)
    purge.start()
    time.sleep(0.3)  # a step or two in
    purge.stop()
    conn = apsw.Connection(str(db))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.execute("INSERT INTO message_search(message_search) VALUES ('integrity-check')")
    finally:
        conn.close()
    again = EvictionPurge(db, session_id)
    again.start()
    again.wait(300)
    store = open_store(tmp_path)
    try:
        assert not evicted_left(store.connection, session_id)
        assert not merge_pending(store.connection)
    finally:
        store.close()


def test_at_exit_every_purge_of_the_process_stops_after_its_step(tmp_path: Path) -> None:
    homes = [tmp_path / "a", tmp_path / "b"]
    purges = []
    for home in homes:
        home.mkdir()
        purge = EvictionPurge(home / "seri.db", _walled(home, 1_500, kept=10))
        purge.start()
        purges.append(purge)
    assert any(thread.name.startswith("seri-purge") for thread in threading.enumerate())
    stop_all()  # what the process runs at exit (atexit), while the purges are under way
    threads = [thread for thread in threading.enumerate() if thread.name.startswith("seri-purge")]
    assert threads == []
    for home in homes:
        conn = apsw.Connection(str(home / "seri.db"))
        try:
            assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        finally:
            conn.close()
