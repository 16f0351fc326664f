"""Seeding recordings the way seri writes them: a real store, real sessions, the real Recorder."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from seri.io.session import session_table
from seri.io.session.store import Store, open_store
from seri.io.trajectories.recorder import Recorder
from seri.pure.trajectories.redaction import Redactor

DAY = 86_400.0
# An OpenRouter-shaped key: what must never be readable in seri.db after it is gone.
CANARY = "sk-or-v1-" + "0123456789abcdef" * 4


def store_at(home: Path) -> Store:
    return open_store(home)


def add_session(store: Store, session_id: str, created: float, project: str = "/project") -> None:
    session_table.create_session(
        store,
        session_id=session_id,
        project=project,
        now=created,
        model="test/model",
        system_prompt="",
        prompt_hashes={"AGENTS.md": "0" * 64},
    )


class RawEvent:
    """A stored event of any type and shape, for the tests of the store and the export (which
    move bodies without reading them); the events seri records are
    seri.pure.trajectories.events'."""

    def __init__(self, type_: str, data: Mapping[str, Any]) -> None:
        self.type = type_
        self._data = dict(data)

    def export(self) -> dict[str, Any]:
        return dict(self._data)


def raw(type_: str, **data: Any) -> Any:
    """An event the recorder takes (typed Any: the Recorder is typed for seri's own)."""
    return RawEvent(type_, data)


def record_run(
    store: Store,
    session_id: str,
    started: float,
    events: Iterable[tuple[str, Mapping[str, Any], float]] = (),
    *,
    header: Mapping[str, Any] | None = None,
    redactor: Redactor | None = None,
) -> Recorder:
    """One run of seri: its header at ``started``, then ``(type, data, at)`` events."""
    recorder = Recorder(store, session_id, redactor or Redactor(), enabled=True)
    header = header or {"model": "test/model", "sampling": {"temperature": 0.2}}
    recorder.start(raw("header", **header), started)
    for type_, data, at in events:
        recorder.record(raw(type_, **data), at=at)
    recorder.flush()
    return recorder


def session_with_run(
    store: Store, session_id: str, started: float, events: int = 3, step: float = 60.0
) -> Recorder:
    """A session whose one run records ``events`` tool calls, ``step`` seconds apart."""
    add_session(store, session_id, started)
    return record_run(
        store,
        session_id,
        started,
        [
            ("tool_call", {"id": f"call_{i}", "name": "read_file", "n": i}, started + step * i)
            for i in range(events)
        ],
    )


def counts(store: Store, session_id: str) -> tuple[int, int]:
    """(runs, events) recorded for a session."""
    return (
        scalar(store, "SELECT count(*) FROM runs WHERE session_id = ?", session_id),
        scalar(store, "SELECT count(*) FROM events WHERE session_id = ?", session_id),
    )


def scalar(store: Store, sql: str, *params: object) -> Any:
    return store.connection.execute(sql, params).fetchall()[0][0]
