"""scripts/bench/goal_check.py's arithmetic: the median's interval, the verdict, and the
command's own time read back through a real bash."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scripts.bench.goal_check import TARGET_MS, Added, alone, median_interval, own_time, timed

samples = st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=60)


@given(samples)
def test_the_interval_is_two_of_the_values_around_the_median(values: list[float]) -> None:
    low, high = median_interval(values)
    assert low in values and high in values
    assert low <= statistics.median(values) <= high


@given(st.integers(6, 60))
def test_the_interval_covers_at_least_95_percent_and_is_the_narrowest_that_does(n: int) -> None:
    low, high = median_interval([float(i) for i in range(n)])
    j = int(low) + 1  # the interval is the j-th and the (n-j+1)-th order statistics
    assert high == n - j

    def covered(j: int) -> float:
        return 1 - 2 * sum(math.comb(n, i) for i in range(j)) / 2**n

    assert covered(j) >= 0.95 > covered(j + 1)


def test_fifteen_values_give_the_fourth_and_the_twelfth() -> None:
    assert median_interval([float(i) for i in range(1, 16)]) == (4.0, 12.0)


@given(st.floats(-100, 100), st.floats(0, 100), st.floats(0, 100))
def test_a_verdict_is_ok_or_over_only_where_the_interval_says_so(
    median: float, below: float, above: float
) -> None:
    added = Added(median, median - below, median + above)
    verdict = added.verdict()
    assert (verdict == "ok") == (added.high <= TARGET_MS)
    assert (verdict == "OVER") == (added.low > TARGET_MS)


def test_the_commands_own_time_is_read_back_from_bash(tmp_path: Path) -> None:
    output = alone(timed("sleep 0.2; echo done"), tmp_path)()
    assert output.startswith("done\n")
    assert 0.2 <= own_time(output) < 5
    assert math.isnan(own_time(alone("echo 'not timed'", tmp_path)()))
