"""Removing the messages a compaction evicted, a short transaction at a time.

A compaction's swap does not delete what it evicts: it moves the session's wall
(``sessions.compacted_before``, the recap's seq), and every reader of a conversation reads
from the wall up (``seri.io.session.conversations.live_rows``), so the evicted rows leave the
conversation in one cheap write. They are deleted here afterwards, on a thread, in
transactions of about ``STEP_SECONDS`` with pauses between, so any other writer waits at most
about that long. (One ``DELETE`` of 100,000 evicted messages held the write lock for minutes.)

The search index must not keep a deleted message's words (README, "seri sessions"). FTS5's
secure-delete removes them row by row, but on a big store that costs milliseconds a row,
tens of them on a busy machine: fine for the tens of messages an ordinary compaction evicts,
half an hour of work for 100,000. So up to ``SECURE_ROWS`` evicted rows are deleted that way;
beyond that, a bulk purge deletes them with secure-delete off (the index then only marks
their entries deleted), notes it in ``profile_facts``, and when the rows are gone merges the
index into one b-tree, ``MERGE_PAGES`` at a time: merging drops the deleted entries, and
``PRAGMA secure_delete`` zeroes the pages they leave. (About 3 s of steps on a store of
100,000 messages, against ~2,000 s of row-by-row secure-delete.)

A process that ends stops after the step under way (a step is one transaction: a kill loses
none of it half-done), and the next process that writes to the session, or compacts, carries
on where it stopped, the index merge included.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
from pathlib import Path
from typing import Any

import apsw

from seri.io.session.store import Store, open_store
from seri.io.session.store_errors import StoreError

STEP_SECONDS = 0.05  # about the longest one purge transaction holds the write lock
# The pause between two steps. SQLite's lock is not fair: a writer that waits sleeps in its
# busy handler (steps of up to 100 ms) and must find the lock free when it wakes, so steps
# back to back would starve it (it gave up after its 10 s). A pause longer than the longest
# sleep lets every waiting writer in between two steps.
PAUSE_SECONDS = 0.12
SECURE_ROWS = 256  # evicted rows deleted one by one with secure-delete; more: a bulk purge
ROWS_SECURE = 4  # rows a statement with secure-delete (milliseconds each)
ROWS_BULK = 50  # rows a statement without (well under a millisecond each, unloaded)
MERGE_PAGES = 64  # pages one merge step writes
MERGE_PENDING = "search_merge_pending"  # the profile_facts key a bulk purge leaves

_BELOW_WALL = (
    "SELECT seq FROM messages WHERE session_id = ?"
    " AND seq < (SELECT compacted_before FROM sessions WHERE id = ?) ORDER BY seq"
)


def evicted_left(conn: Any, session_id: str) -> bool:
    """Whether any message below the session's wall is still stored (one index seek)."""
    return bool(conn.execute(_BELOW_WALL + " LIMIT 1", (session_id, session_id)).fetchall())


def merge_pending(conn: Any) -> bool:
    """Whether a bulk purge left deleted words in the search index, to be merged away."""
    rows = conn.execute("SELECT 1 FROM profile_facts WHERE key = ?", (MERGE_PENDING,))
    return bool(rows.fetchall())


def _secure_delete(conn: Any, on: bool) -> None:
    conn.execute(
        "INSERT INTO message_search(message_search, rank) VALUES ('secure-delete', ?)",
        (int(on),),
    )


def purge_step(store: Store, session_id: str, *, budget: float = STEP_SECONDS) -> bool:
    """Delete evicted messages of the session for about ``budget`` seconds, in one
    transaction; True while some are left."""
    with store.write() as conn:
        start = time.perf_counter()
        # Once bulk, bulk to the end: the index merge cleans up after all of it anyway, and
        # row-by-row secure-delete among the bulk purge's deleted entries is slower still.
        bulk = merge_pending(conn) or bool(
            conn.execute(
                _BELOW_WALL + " LIMIT 1 OFFSET ?", (session_id, session_id, SECURE_ROWS)
            ).fetchall()
        )
        if bulk:
            # Set back before the commit: no other connection ever sees it off.
            _secure_delete(conn, False)
            conn.execute(
                "INSERT OR REPLACE INTO profile_facts(key, value) VALUES (?, '1')",
                (MERGE_PENDING,),
            )
        size = ROWS_BULK if bulk else ROWS_SECURE
        try:
            while True:
                rows = conn.execute(
                    _BELOW_WALL + " LIMIT ?", (session_id, session_id, size)
                ).fetchall()
                if rows:
                    conn.execute(
                        "DELETE FROM messages WHERE session_id = ? AND seq >= ? AND seq <= ?",
                        (session_id, rows[0][0], rows[-1][0]),
                    )
                if len(rows) < size:
                    return False
                if time.perf_counter() - start >= budget:
                    return True
        finally:
            if bulk:
                with contextlib.suppress(apsw.Error):
                    _secure_delete(conn, True)


def merge_step(store: Store) -> bool:
    """One bounded step of merging the search index into one b-tree after a bulk purge;
    True while there is more to merge."""
    with store.write() as conn:
        if not merge_pending(conn):
            return False
        before = conn.total_changes()
        conn.execute(
            "INSERT INTO message_search(message_search, rank) VALUES ('merge', ?)",
            (-MERGE_PAGES,),
        )
        # FTS5: fewer than two changes means there was nothing left to merge.
        if conn.total_changes() - before >= 2:
            return True
        conn.execute("DELETE FROM profile_facts WHERE key = ?", (MERGE_PENDING,))
        return False


def run_purge(
    store: Store,
    session_id: str,
    *,
    stop: threading.Event | None = None,
    pause: float = PAUSE_SECONDS,
) -> None:
    """Purge the session's evicted rows, then merge the index if a bulk purge asks for it,
    a step at a time with ``pause`` between steps, until done or ``stop`` is set."""
    stop = stop or threading.Event()
    while not stop.is_set() and purge_step(store, session_id):
        stop.wait(pause)
    while not stop.is_set() and merge_step(store):
        stop.wait(pause)


# The purges this process started: every one is stopped at exit (``stop_all``).
_STARTED: set[EvictionPurge] = set()
_STARTED_LOCK = threading.Lock()


def stop_all(timeout: float = 5.0) -> None:
    """Stop every purge of this process after the step under way, as the process ends."""
    with _STARTED_LOCK:
        started = list(_STARTED)
        _STARTED.clear()
    for purge in started:
        purge.stop(timeout)


atexit.register(stop_all)


class EvictionPurge:
    """Purges one session's evicted messages on a daemon thread; stopped at exit."""

    def __init__(self, database: Path, session_id: str) -> None:
        self.database = database
        self.session_id = session_id
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._again = False  # asked to purge (again) since the thread last looked
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Purge now (on the thread), or once more after the purge under way."""
        with self._lock:
            self._again = True
            if self._thread is not None:
                return
            thread = self._thread = threading.Thread(
                target=self._run, name=f"seri-purge-{self.session_id[:8]}", daemon=True
            )
        with _STARTED_LOCK:
            _STARTED.add(self)
        thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop after the step under way (it commits or rolls back whole)."""
        self._stopping.set()
        self.wait(timeout)

    def wait(self, timeout: float | None = None) -> None:
        """Until the thread has nothing left to do (or is stopped)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _asked(self) -> bool:
        with self._lock:
            if not self._again or self._stopping.is_set():
                self._thread = None
                return False
            self._again = False
            return True

    def _run(self) -> None:
        try:
            store = open_store(self.database.parent)
        except (StoreError, apsw.Error):
            with self._lock:
                self._thread = None
            return  # the next process that compacts or writes the session tries again
        try:
            while self._asked():
                run_purge(store, self.session_id, stop=self._stopping)
        except (StoreError, apsw.Error):
            with self._lock:
                self._thread = None
            # A busy or full store: the rows stay below the wall, unseen, for a later purge.
        finally:
            with contextlib.suppress(apsw.Error):
                store.close()
