"""Ageing recordings out when a session starts.

Cheap when nothing is old (one indexed query and one directory listing), never
silent when something goes, and never fatal: a store that is busy or a file
that cannot be deleted costs a warning, not the session.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

import apsw

from seri.io.trajectories.trajectory_prune import PruneResult, age_out_spill, prune

if TYPE_CHECKING:
    # Only the type: importing profile would pull in the legacy importer.
    from seri.pure.inputs.settings import Settings
    from seri.runtime.session.profile import Profile


def prune_at_session_start(profile: Profile, settings: Settings, current_session: str) -> None:
    if settings.retention_error:
        print(f"seri: warning: {settings.retention_error}", file=sys.stderr)
        return
    try:
        result = prune(
            profile.store, profile.root, time.time(), settings.retention_days, current_session
        )
    except (apsw.Error, OSError) as exc:
        print(f"seri: warning: could not age old recordings out: {exc}", file=sys.stderr)
        return
    for line in describe(result, settings.retention_days):
        print(f"seri: {line}", file=sys.stderr)
    try:
        age_out_spill(profile.root, time.time(), settings.retention_days)
    except OSError as exc:
        print(f"seri: warning: could not age old command output out: {exc}", file=sys.stderr)


def window_words(days: float) -> str:
    shown = f"{days:g}"
    return f"{shown} day" if shown == "1" else f"{shown} days"


def describe(result: PruneResult, days: float) -> list[str]:
    """What a prune did, for people; nothing when nothing went."""
    plan = result.plan
    lines = []
    if not plan.empty:
        parts = []
        if plan.sessions:
            parts.append(_count(len(plan.sessions), "session"))
        if plan.files:
            parts.append(_count(len(plan.files), "old .jsonl file"))
        lines.append(
            f"aged out recordings older than {window_words(days)}: "
            f"{' and '.join(parts)}, {_count(plan.events, 'event')}"
        )
    return lines + prune_warnings(result)


def prune_warnings(result: PruneResult) -> list[str]:
    lines = [f"warning: could not delete {path}: {why}" for path, why in result.failed]
    lines += [
        f"warning: kept the recordings of session {session}: some of its records have a "
        f"time seri cannot read (see `seri trajectory export --session {session}`)"
        for session in result.quarantined
    ]
    if not result.wal_cleared:
        lines.append(
            "warning: another seri process is reading the store, so the deleted "
            "recordings stay in seri.db-wal until its next checkpoint"
        )
    return lines


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
