"""How long another writer (and a reader) of seri.db waits while seri works on it.

A thread with a plain connection of its own (none of seri's code) takes the write lock over
and over (``BEGIN IMMEDIATE``, then ``COMMIT`` at once) and reads a session's newest rows in
between, noting how long each had to wait: the longest write wait is about the longest time
anyone else held the write lock (within the busy handler's sleep steps, up to 100 ms). Used
by the tests of long compactions and by scripts/bench/compaction_lock.py.

    with LockProbe(db_path) as probe:
        ...  # run seri
    probe.longest_write_wait, probe.longest_read
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from types import TracebackType

import apsw


class LockProbe:
    """Takes the write lock and reads, every ``interval`` seconds, until stopped."""

    def __init__(self, database: Path, *, interval: float = 0.005) -> None:
        self.database = database
        self.interval = interval
        self.longest_write_wait = 0.0
        self.longest_read = 0.0
        self.writes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lock-probe", daemon=True)
        self.error: BaseException | None = None

    def __enter__(self) -> LockProbe:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=120)

    def _run(self) -> None:
        try:
            conn = apsw.Connection(str(self.database))
            conn.set_busy_timeout(600_000)
            try:
                while not self._stop.is_set():
                    self._once(conn)
                    time.sleep(self.interval)
            finally:
                conn.close()
        except BaseException as exc:  # reported to the caller, who asserts on it
            self.error = exc

    def _once(self, conn: apsw.Connection) -> None:
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        waited = time.perf_counter() - start
        conn.execute("COMMIT")
        self.longest_write_wait = max(self.longest_write_wait, waited)
        self.writes += 1
        start = time.perf_counter()
        conn.execute("SELECT id, message_count, compacted_before FROM sessions").fetchall()
        self.longest_read = max(self.longest_read, time.perf_counter() - start)
