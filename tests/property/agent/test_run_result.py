"""The result record and the cost budget, for any ending and any totals: the record's
exit status follows from its status (done is 0 and nothing else is; a goal run's own ends
and context_exhausted have theirs, seri.pure.agent.goals), it is plain JSON, its
cost and cached share are the totals'; the budget stops exactly when the reported cost
reached it, and always when a call reported no cost."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.agent.cost_budget import budget_stop
from seri.pure.agent.goals import GOAL_EXIT_STATUS
from seri.pure.agent.run_result import (
    EXIT_TERMINATED,
    RUN_STATUSES,
    RunResult,
    ending_of_task,
    failed,
    interrupted,
)
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_UNFINISHED, EXIT_USAGE
from seri.pure.session.records import Usage

money = st.one_of(st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False))
usages = st.one_of(
    st.none(),
    st.builds(
        Usage,
        input_tokens=st.integers(0, 10**9),
        output_tokens=st.integers(0, 10**9),
        cached_tokens=st.integers(0, 10**9),
        cost=money,
        upstream_cost=money,
    ),
)


def _sum(calls: list[Usage | None]) -> UsageTotals:
    out = UsageTotals()
    for usage in calls:
        out = out.add(usage)
    return out


totals = st.lists(usages, max_size=8).map(_sum)
task_endings = st.builds(
    ending_of_task,
    status=st.sampled_from([*RUN_STATUSES, "something new"]),
    answer=st.text(max_size=20),
    detail=st.text(max_size=20),
    turns=st.integers(0, 1000),
    by_user=st.booleans(),
    signal_number=st.sampled_from([0, 2, 15]),
)
endings = st.one_of(
    task_endings,
    st.builds(interrupted, st.integers(0, 1000), st.sampled_from([0, 2, 15])),
    st.builds(failed, st.text(max_size=20), st.integers(-5, 300)),
)


@given(endings, totals, st.floats(0, 1e6), st.floats(0, 4e9))
def test_the_record_follows_from_the_ending_and_the_totals(
    ending: object, usage: UsageTotals, duration: float, at: float
) -> None:
    result = RunResult(ending, usage, duration, at, session="s", run="r")  # type: ignore[arg-type]
    record = json.loads(json.dumps(result.export(), allow_nan=False))
    assert record["type"] == "result" and record["status"] in RUN_STATUSES
    status, code = record["status"], record["exit_status"]
    assert (status == "done") == (code == EXIT_OK)
    allowed = {
        # README "Goals": stalled 3, max_checks 4, wall 5; context_exhausted 6.
        **{name: {exit_status} for name, exit_status in GOAL_EXIT_STATUS.items()},
        "done": {EXIT_OK},
        "interrupted": {EXIT_INTERRUPTED, EXIT_TERMINATED},
        "error": {EXIT_UNFINISHED, EXIT_USAGE},
    }
    assert code in allowed.get(status, {EXIT_UNFINISHED})
    assert (record["error"] is None) == (status == "done")
    assert record["cost"] == usage.total_cost
    share = record["cached_share"]
    assert share is None or 0 <= share <= 1
    assert record["usage"]["calls"] == usage.calls and record["duration_ms"] >= 0


@given(st.floats(min_value=1e-6, max_value=1e6), st.lists(usages, max_size=8))
def test_the_budget_stops_exactly_when_reached_or_unknowable(
    limit: float, calls: list[Usage | None]
) -> None:
    spent = _sum(calls)
    stop = budget_stop(limit, spent)
    unpriced = any(u is None or (u.cost is None and u.upstream_cost is None) for u in calls)
    if unpriced:
        assert stop is not None and stop.status == "error"
    elif (spent.total_cost or 0.0) >= limit:
        assert stop is not None and stop.status == "budget"
    else:
        assert stop is None


@given(st.floats(min_value=0, max_value=4e9))
def test_times_read_the_same_as_sqlites(seconds: float) -> None:
    """The stream's `at` (Python) and the export's (SQLite) are the same text."""
    import apsw

    from seri.pure.terminal.timestamps import iso_utc

    query = "SELECT replace(datetime(?, 'unixepoch', 'subsec'), ' ', 'T') || 'Z'"
    [(expected,)] = apsw.Connection(":memory:").execute(query, (seconds,)).fetchall()
    assert iso_utc(seconds) == expected
