"""Which recordings have aged out: the decision, given the facts and the clock's reading.

A session's recordings go once its most recent record (its latest event, or
the start of its latest run) is older than the window. A ``.jsonl`` file an
older release left goes by its modification time instead. The session being
recorded stays, however old its records are. A record exactly at the edge of
the window is not older than it, so it stays too.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

SECONDS_PER_DAY = 86_400.0


@attrs.frozen
class RecordedSession:
    """A session's recordings in seri.db, summarised."""

    session_id: str
    last_at: float
    runs: int
    events: int


@attrs.frozen
class LegacyRecording:
    """A trajectory file from the older release; ``session_id`` is its name without ``.jsonl``."""

    path: str
    session_id: str
    mtime: float
    events: int


@attrs.frozen
class PrunePlan:
    """What goes: sessions (their runs and events) and files, oldest first."""

    sessions: tuple[RecordedSession, ...] = ()
    files: tuple[LegacyRecording, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.sessions and not self.files

    @property
    def events(self) -> int:
        return sum(s.events for s in self.sessions) + sum(f.events for f in self.files)


def cutoff(now: float, window_days: float) -> float:
    """Records strictly before this moment are older than the window."""
    return now - window_days * SECONDS_PER_DAY


def expired_sessions(
    sessions: Iterable[RecordedSession], now: float, window_days: float, current_session: str
) -> tuple[RecordedSession, ...]:
    edge = cutoff(now, window_days)
    chosen = [s for s in sessions if s.session_id != current_session and s.last_at < edge]
    return tuple(sorted(chosen, key=lambda s: (s.last_at, s.session_id)))


def expired_files(
    files: Iterable[LegacyRecording], now: float, window_days: float, current_session: str
) -> tuple[LegacyRecording, ...]:
    edge = cutoff(now, window_days)
    chosen = [f for f in files if f.session_id != current_session and f.mtime < edge]
    return tuple(sorted(chosen, key=lambda f: (f.mtime, f.path)))


def plan_prune(
    sessions: Iterable[RecordedSession],
    files: Iterable[LegacyRecording],
    now: float,
    window_days: float,
    current_session: str,
) -> PrunePlan:
    return PrunePlan(
        expired_sessions(sessions, now, window_days, current_session),
        expired_files(files, now, window_days, current_session),
    )
