"""The goal rules (seri.pure.agent.goals): a pass is done whatever came before; the stall rule fires
exactly when the same failure with the same files comes ``stall_after`` times in a row (and
any change resets it); --max-checks and --max-wall bound the run; every end has its own exit
status, none of the contract's (1, 2, 130, 143) but where the spec says 1."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.agent.goals import (
    GOAL_EXIT_STATUS,
    CheckOutcome,
    Continue,
    Goal,
    GoalLimits,
    GoalProgress,
    Stop,
    after_check,
    exit_status_of,
    goal_pin,
    likeness,
    wall_seconds,
)

GOAL = Goal("make the tests pass", "python -m pytest -q")

failures = st.builds(
    CheckOutcome,
    exit_code=st.one_of(st.none(), st.integers(1, 255)),
    timed_out=st.booleans(),
    output=st.text(max_size=60),
    tree=st.sampled_from(("a", "b", "c")),
)
limits = st.builds(
    GoalLimits,
    max_checks=st.one_of(st.none(), st.integers(1, 12)),
    max_wall=st.none(),
    stall_after=st.integers(1, 6),
)


def run(outcomes: list[CheckOutcome], rules: GoalLimits) -> list[tuple[GoalProgress, object]]:
    progress, seen = GoalProgress(), []
    for outcome in outcomes:
        progress, decision = after_check(GOAL, progress, rules, outcome, 0.0, 60.0)
        seen.append((progress, decision))
        if isinstance(decision, Stop):
            break
    return seen


@given(st.lists(failures, max_size=15), limits)
def test_a_pass_is_done_whatever_came_before(before: list[CheckOutcome], rules: GoalLimits) -> None:
    progress = GoalProgress()
    for outcome in before:
        progress, _ = after_check(GOAL, progress, rules, outcome, 0.0, 60.0)
    passed = CheckOutcome(0, False, "ok")
    after, decision = after_check(GOAL, progress, rules, passed, 1e9, 60.0)
    assert decision == Stop("done") and after.checks == progress.checks + 1


@given(failures, st.integers(1, 6), st.integers(1, 12))
def test_the_same_failure_stalls_exactly_at_the_rule(
    outcome: CheckOutcome, stall_after: int, repeats: int
) -> None:
    seen = run([outcome] * repeats, GoalLimits(stall_after=stall_after))
    stops = [d for _, d in seen if isinstance(d, Stop)]
    if repeats >= stall_after:
        assert len(seen) == stall_after and stops == [stops[0]] and stops[0].status == "stalled"
    else:
        assert not stops and all(isinstance(d, Continue) for _, d in seen)


@given(st.lists(failures, min_size=1, max_size=20), limits)
def test_a_stall_needs_that_many_alike_in_a_row(
    outcomes: list[CheckOutcome], rules: GoalLimits
) -> None:
    seen = run(outcomes, rules)
    last_progress, last = seen[-1]
    run_of_alike = 1
    for earlier, later in itertools.pairwise(outcomes[: len(seen)]):
        run_of_alike = run_of_alike + 1 if likeness(earlier) == likeness(later) else 1
    assert last_progress.same_failures == run_of_alike
    if isinstance(last, Stop) and last.status == "stalled":
        assert run_of_alike >= rules.stall_after
    else:
        assert run_of_alike < rules.stall_after


@given(st.lists(failures, min_size=1, max_size=30), limits)
def test_no_more_checks_than_max_checks(outcomes: list[CheckOutcome], rules: GoalLimits) -> None:
    seen = run(outcomes, rules)
    if rules.max_checks is not None:
        assert len(seen) <= rules.max_checks
        if len(outcomes) >= rules.max_checks:
            assert isinstance(seen[-1][1], Stop)


@given(failures, st.floats(1, 1e5), st.floats(0, 2e5))
def test_wall_time_ends_a_failing_run(outcome: CheckOutcome, wall: float, elapsed: float) -> None:
    rules = GoalLimits(max_wall=wall, stall_after=99)
    _, decision = after_check(GOAL, GoalProgress(), rules, outcome, elapsed, 60.0)
    assert (isinstance(decision, Stop) and decision.status == "wall") == (elapsed >= wall)
    if isinstance(decision, Continue):
        assert decision.message.startswith("The check `python -m pytest -q` ")


@given(st.text(max_size=40), st.integers(0, 10**6), st.integers(0, 10**6))
def test_numbers_alone_do_not_make_a_failure_new(text: str, a: int, b: int) -> None:
    one = CheckOutcome(1, False, f"{text} failed in {a} s", "t")
    two = CheckOutcome(1, False, f"{text} failed in {b} s", "t")
    assert likeness(one) == likeness(two)
    assert likeness(one) != likeness(CheckOutcome(1, False, f"{text} failed in {a} s", "u"))


@given(st.text(min_size=1, max_size=2000), st.text(min_size=1, max_size=200))
def test_the_goal_pin_holds_text_and_command_verbatim(text: str, command: str) -> None:
    pin = goal_pin(Goal(text, command))
    assert f"`{command}`" in pin and (text.strip() in pin)


def test_exit_statuses_are_distinct_and_clear_of_the_contract() -> None:
    codes = [code for status, code in GOAL_EXIT_STATUS.items() if status != "done"]
    assert len(set(codes)) == len(codes) and not {1, 2, 130, 143} & set(codes)
    assert exit_status_of("done") == 0 and exit_status_of("max_turns") == 1
    assert exit_status_of("budget") == 1


@given(st.integers(1, 7 * 24), st.sampled_from(("h", "m", "s", "")))
def test_wall_durations(amount: int, unit: str) -> None:
    seconds = wall_seconds(f"{amount}{unit}")
    scale = {"h": 3600, "m": 60, "s": 1, "": 1}[unit]
    assert seconds == amount * scale
    assert wall_seconds("0") is None and wall_seconds("-1m") is None and wall_seconds("2d") is None
