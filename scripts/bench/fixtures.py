"""Stores of one long session each, made once per run and shared by the rows that need them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.common import log
from scripts.bench.data import store_with_history, write_jsonl


@dataclass(frozen=True)
class HistoryStore:
    count: int
    home: Path
    session_id: str
    db_bytes: int
    jsonl: Path
    jsonl_bytes: int


class Fixtures:
    def __init__(self, work: Path) -> None:
        self.work = work
        self._stores: dict[int, HistoryStore] = {}

    def history(self, count: int) -> HistoryStore:
        if count not in self._stores:
            start = time.perf_counter()
            home = self.work / f"history-{count}"
            store, session_id = store_with_history(home, count)
            jsonl = self.work / f"history-{count}.jsonl"
            jsonl_bytes = write_jsonl(store, session_id, jsonl)
            store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            store.close()
            db_bytes = (home / "seri.db").stat().st_size
            self._stores[count] = HistoryStore(
                count, home, session_id, db_bytes, jsonl, jsonl_bytes
            )
            log(f"made a session of {count:,} messages in {time.perf_counter() - start:.1f} s")
        return self._stores[count]
