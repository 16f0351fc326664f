"""Properties of the retention decision: what ages out, what never does."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.trajectories.retention import (
    SECONDS_PER_DAY,
    LegacyRecording,
    RecordedSession,
    cutoff,
    expired_files,
    expired_sessions,
    plan_prune,
)

NOW = 1_800_000_000.0

ids = st.sampled_from([f"s{i}" for i in range(8)])
moments = st.floats(min_value=NOW - 400 * SECONDS_PER_DAY, max_value=NOW + SECONDS_PER_DAY)
windows = st.floats(min_value=0.001, max_value=365.0)
sessions = st.lists(
    st.builds(RecordedSession, ids, moments, st.integers(0, 5), st.integers(0, 50)),
    max_size=12,
)
files = st.lists(
    st.builds(LegacyRecording, st.text(min_size=1, max_size=5), ids, moments, st.integers(0, 9)),
    max_size=12,
)


@given(sessions, windows, ids)
def test_exactly_the_sessions_older_than_the_window_go_and_never_the_current_one(
    found: list[RecordedSession], days: float, current: str
) -> None:
    gone = expired_sessions(found, NOW, days, current)
    edge = NOW - days * SECONDS_PER_DAY
    assert all(s.session_id != current for s in gone)
    expected = [s for s in found if s.last_at < edge and s.session_id != current]
    assert sorted(gone, key=repr) == sorted(expected, key=repr)
    assert [s.last_at for s in gone] == sorted(s.last_at for s in gone)


@given(sessions, windows, windows, ids)
def test_a_longer_window_never_prunes_more(
    found: list[RecordedSession], a: float, b: float, current: str
) -> None:
    short, long = sorted((a, b))
    assert set(expired_sessions(found, NOW, long, current)) <= set(
        expired_sessions(found, NOW, short, current)
    )


@given(windows)
def test_the_edge_of_the_window_is_kept_and_just_past_it_goes(days: float) -> None:
    edge = cutoff(NOW, days)
    at_edge = RecordedSession("edge", edge, 1, 1)
    past = RecordedSession("past", math.nextafter(edge, -math.inf), 1, 1)
    inside = RecordedSession("inside", math.nextafter(edge, math.inf), 1, 1)
    assert expired_sessions([at_edge, past, inside], NOW, days, "") == (past,)


@given(files, windows, ids)
def test_files_go_by_modification_time_and_the_current_sessions_file_stays(
    found: list[LegacyRecording], days: float, current: str
) -> None:
    gone = expired_files(found, NOW, days, current)
    edge = NOW - days * SECONDS_PER_DAY
    expected = [f for f in found if f.mtime < edge and f.session_id != current]
    assert sorted(gone, key=repr) == sorted(expected, key=repr)


@given(sessions, files, windows, ids)
def test_a_plan_is_the_union_of_both_decisions(
    found: list[RecordedSession], legacy: list[LegacyRecording], days: float, current: str
) -> None:
    plan = plan_prune(found, legacy, NOW, days, current)
    assert plan.sessions == expired_sessions(found, NOW, days, current)
    assert plan.files == expired_files(legacy, NOW, days, current)
    assert plan.empty == (not plan.sessions and not plan.files)
    assert plan.events == sum(s.events for s in plan.sessions) + sum(f.events for f in plan.files)
