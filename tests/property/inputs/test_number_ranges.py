"""seri.pure.inputs.number_ranges: a number from outside is in its range, or one short line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.inputs.number_ranges import (
    LISTED_ROWS,
    PROVIDER_INTEGER,
    ROW_NUMBERS,
    TOKENS,
    TOOL_COUNT,
    TURNS,
    Range,
    finite_in,
    range_problem,
    whole_number_in,
    within,
)

RANGES = st.sampled_from([TURNS, LISTED_ROWS, TOKENS, PROVIDER_INTEGER, TOOL_COUNT, ROW_NUMBERS])


@given(st.integers(-(10**40), 10**40), RANGES)
def test_a_whole_number_is_taken_exactly_when_it_is_in_range(value: int, allowed: Range) -> None:
    taken = whole_number_in(str(value), allowed)
    assert taken == (value if allowed[0] <= value <= allowed[1] else None)
    problem = range_problem("--x", value, allowed)
    assert (problem == "") == within(value, allowed)


@given(st.text(max_size=6000), RANGES)
def test_any_text_is_a_number_in_range_or_one_short_line(text: str, allowed: Range) -> None:
    taken = whole_number_in(text, allowed)
    if taken is not None:
        assert within(taken, allowed)
        return
    problem = range_problem("--limit", text, allowed)
    assert problem.startswith("--limit must be a whole number from ")
    assert "\n" not in problem and len(problem) < 150


@given(st.one_of(st.booleans(), st.floats(), st.none(), st.text(max_size=3)), RANGES)
def test_what_is_not_an_int_is_never_within(value: object, allowed: Range) -> None:
    assert not within(value, allowed)


@given(st.one_of(st.floats(), st.integers(-(10**50), 10**50), st.booleans(), st.none()))
def test_a_finite_amount_is_inside_its_bounds(value: object) -> None:
    found = finite_in(value, 0.0, 1e9)
    if found is not None:
        assert 0.0 < found <= 1e9
