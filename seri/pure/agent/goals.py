"""Goals: a task that is done when a command exits 0, not when the model says so.

After each task of a goal run seri runs the goal's check command. Exit 0 ends the run as
``done``; any other end (a failure, a time-out) sends the tail of its output back to the
model as the next task, unless a rule ends the run first. This module decides, from a check's
outcome and what the run has used so far, which of those happens; the runtime
(``seri.runtime.agent.goal_loop``) runs the tasks and the checks.

The rules that end a goal run without the check passing, each with its own status and exit
status (``GOAL_EXIT_STATUS``):

* ``stalled``: the same failing output (numbers aside: timings and addresses differ from run
  to run) with the project's files unchanged, ``stall_after`` checks in a row. Nothing the
  model did in between changed anything the check could see, so another round would not
  either.
* ``max_checks``: ``--max-checks N`` checks ran and the last one failed.
* ``wall``: ``--max-wall`` elapsed, seen between tasks and after each check (a task under way
  is not cut).

The turn budget (``--max-turns``, for the whole goal run) and the cost budget end the run
from inside a task, with the task's own status (``max_turns``, ``budget``: exit 1, as the spec
says a spent turn budget exits).
"""

from __future__ import annotations

import re
from typing import Literal

import attrs

# Three checks in a row that fail alike with nothing changed: the model is going in circles.
STALL_AFTER = 3
# What the model is shown of a failing check: its last characters (the end of a test run's
# output says what failed).
CHECK_TAIL_CHARS = 4_000
# The goal's text as the recap carries it: a pin's size at most (seri.io.session.pins).
GOAL_TEXT_CHARS = 2_000
GOAL_PIN_PREFIX = "The goal"

GoalStop = Literal["done", "stalled", "max_checks", "wall"]

# The exit status of each way a goal run (or any run) can end; the statuses not named here
# exit 1 (the task did not finish) as before. 2, 130 and 143 are taken (usage, Ctrl-C,
# SIGTERM).
GOAL_EXIT_STATUS: dict[str, int] = {
    "done": 0,
    "stalled": 3,
    "max_checks": 4,
    "wall": 5,
    "context_exhausted": 6,
}


@attrs.frozen
class Goal:
    """What a goal run works toward: the task's text (may be empty: ``/goal CMD`` checks
    whatever tasks follow) and the command whose exit 0 means done."""

    text: str
    command: str


@attrs.frozen
class GoalLimits:
    """What a goal run may use besides turns and money: checks, and seconds of wall time."""

    max_checks: int | None = None
    max_wall: float | None = None
    stall_after: int = STALL_AFTER


@attrs.frozen
class CheckOutcome:
    """One run of the check: its exit status (None when it was stopped or could not run),
    whether its time limit stopped it, its output (redacted), and a digest of the project's
    files as they were when it ran (``seri.io.agent.tree_state``)."""

    exit_code: int | None
    timed_out: bool
    output: str
    tree: str = ""

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@attrs.frozen
class GoalProgress:
    """What the goal run has done so far: checks run, and how many failures in a row looked
    the same (``last_failure`` is the last one's likeness, "" after a pass or at the start)."""

    checks: int = 0
    same_failures: int = 0
    last_failure: str = ""


@attrs.frozen
class Continue:
    """Go on: ``message`` is the next task (the failing check, for the model)."""

    message: str


@attrs.frozen
class Stop:
    """End the goal run with ``status``; ``detail`` says why, for a person."""

    status: GoalStop
    detail: str = ""


Decision = Continue | Stop


def goal_pin(goal: Goal) -> str:
    """The goal as every recap carries it, verbatim (its text cut to a pin's size)."""
    text = goal.text.strip()
    if len(text) > GOAL_TEXT_CHARS:
        text = text[:GOAL_TEXT_CHARS] + " […]"
    done_when = f"done when `{goal.command}` exits 0"
    if not text:
        return f"{GOAL_PIN_PREFIX} ({done_when})"
    return f"{GOAL_PIN_PREFIX} ({done_when}): {text}"


def likeness(outcome: CheckOutcome) -> str:
    """What two failing checks must share to count as the same failure: the output with
    every number made alike (test runners print timings), the exit status and the files."""
    output = re.sub(r"\d+", "#", outcome.output)
    return f"{outcome.exit_code}|{outcome.timed_out}|{outcome.tree}|{output}"


def output_tail(output: str, limit: int = CHECK_TAIL_CHARS) -> str:
    """The end of a check's output, marked when cut."""
    if len(output) <= limit:
        return output
    return f"[… {len(output) - limit:,} characters before this cut]\n" + output[-limit:]


def failure_message(goal: Goal, outcome: CheckOutcome, timeout: float) -> str:
    """The next task for the model after a failing check."""
    if outcome.timed_out:
        head = f"The check `{goal.command}` did not finish within {timeout:g} s and was stopped"
    elif outcome.exit_code is None:
        head = f"The check `{goal.command}` could not run"
    else:
        head = f"The check `{goal.command}` failed with exit {outcome.exit_code}"
    tail = output_tail(outcome.output.rstrip())
    shown = f":\n{tail}" if tail else " (it printed nothing)."
    return f"{head}{shown}\n\nThe goal is not met yet: keep working until `{goal.command}` exits 0."


def after_check(
    goal: Goal,
    progress: GoalProgress,
    limits: GoalLimits,
    outcome: CheckOutcome,
    elapsed: float,
    timeout: float,
) -> tuple[GoalProgress, Decision]:
    """The run after one check: done, go on with the failure as the next task, or stop."""
    checks = progress.checks + 1
    if outcome.passed:
        return GoalProgress(checks), Stop("done")
    like = likeness(outcome)
    same = progress.same_failures + 1 if like == progress.last_failure else 1
    after = GoalProgress(checks, same, like)
    if same >= limits.stall_after:
        return after, Stop(
            "stalled",
            f"the check `{goal.command}` failed the same way {same} times in a row with no "
            "file changed; the model is not making progress. Look at the last failure, "
            "change the task or the check, then go on with --continue",
        )
    if limits.max_checks is not None and checks >= limits.max_checks:
        return after, Stop(
            "max_checks",
            f"the check `{goal.command}` ran {checks} times (--max-checks {limits.max_checks}) "
            "and still fails",
        )
    wall = over_wall(limits, elapsed)
    if wall is not None:
        return after, wall
    return after, Continue(failure_message(goal, outcome, timeout))


def over_wall(limits: GoalLimits, elapsed: float) -> Stop | None:
    """The wall-time stop, once ``elapsed`` seconds reach ``--max-wall``."""
    if limits.max_wall is None or elapsed < limits.max_wall:
        return None
    return Stop(
        "wall",
        f"the run has taken {elapsed:,.0f} s of its --max-wall {limits.max_wall:g} s and the "
        "goal is not met",
    )


def exit_status_of(status: str, *, default: int = 1) -> int:
    """The exit status a run's ending status gives (``default`` for the others)."""
    return GOAL_EXIT_STATUS.get(status, default)


_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}
# A week: a longer wall limit is a typo, not a plan.
MAX_WALL_SECONDS = 7 * 24 * 3600.0


def wall_seconds(text: str) -> float | None:
    """``--max-wall``'s value (``90``, ``90s``, ``30m``, ``2h``, ``1.5h``) in seconds, or None
    when it is not a duration above zero and at most a week."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*", text)
    if match is None:
        return None
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    return seconds if 0 < seconds <= MAX_WALL_SECONDS else None
