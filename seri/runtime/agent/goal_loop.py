"""A goal run: a task, the goal's check, and again with the check's failure, until it passes.

``run_goal`` knows nothing of sessions or terminals: it is handed a callable that runs one task
(the chat's, or the session controller's) and one that runs the check, and what to record and
tell. The decisions (done, go on with this message, stop with that status) are
``seri.pure.agent.goals``'; this is the loop around them, with the clock.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import attrs

from seri.pure.agent.goals import (
    CheckOutcome,
    Continue,
    Goal,
    GoalLimits,
    GoalProgress,
    Stop,
    after_check,
    output_tail,
    over_wall,
)
from seri.pure.agent.task_records import TaskEnd
from seri.pure.trajectories import event_record, events

# (the task's text, model turns the goal run has used so far) -> how the task ended.
RunTask = Callable[[str, int], TaskEnd]
# Runs the check once: its outcome and how long it took (seconds).
RunCheck = Callable[[], tuple[CheckOutcome, float]]


@attrs.frozen
class GoalPorts:
    """What the loop does besides deciding: run a task, run the check, record an event,
    keep the goal's standing with the session (status, checks), and tell a person."""

    run_task: RunTask
    run_check: RunCheck
    record: Callable[[event_record.Event], None]
    note: Callable[[str, int], None]
    tell: Callable[[str], None]
    clock: Callable[[], float] = time.monotonic


@attrs.frozen
class GoalRunEnd:
    """How a goal run ended: ``status`` (``done``, a goal rule's, or the last task's when
    the task did not finish), the last task's end, the checks run and why it ended unmet."""

    status: str
    # None when the wall-time alarm stopped a task between two of its effects.
    task: TaskEnd | None
    checks: int
    detail: str = ""


def run_goal(
    goal: Goal,
    limits: GoalLimits,
    prompt: str,
    ports: GoalPorts,
    *,
    timeout: float,
    checks_before: int = 0,
) -> GoalRunEnd:
    """Work on ``prompt`` toward ``goal``: after each finished task the check runs; its
    failure is the next task. ``checks_before``: checks an earlier run of the goal made (a
    --continue goes on counting them). ``--max-wall`` stops a task under way as Ctrl-C
    would (what was done is kept), then the run ends with status ``wall``."""
    alarm = WallAlarm(limits.max_wall)
    state = _Run(goal, limits, ports, timeout, alarm, began=ports.clock(), checks=checks_before)
    with alarm:
        try:
            return state.run(prompt)
        except KeyboardInterrupt:
            if not alarm.rang:
                raise
        wall = over_wall(limits, ports.clock() - state.began) or Stop("wall")
        return _ended(ports, wall.status, state.end, state.progress.checks, wall.detail)


class _Run:
    """The loop's state, kept where the wall-time alarm's handler can still read it."""

    def __init__(
        self,
        goal: Goal,
        limits: GoalLimits,
        ports: GoalPorts,
        timeout: float,
        alarm: WallAlarm,
        *,
        began: float,
        checks: int,
    ) -> None:
        self.goal, self.limits, self.ports, self.timeout = goal, limits, ports, timeout
        self.alarm = alarm
        self.began = began
        self.progress = GoalProgress(checks=checks)
        self.end: TaskEnd | None = None

    def run(self, prompt: str) -> GoalRunEnd:
        goal, ports = self.goal, self.ports
        while True:
            end = self.end = ports.run_task(prompt, self.end.turns if self.end else 0)
            if end.status != "done":
                # The task did not finish (turn or cost budget, a failure, Ctrl-C, the wall
                # alarm): no check is worth running on half a task; the run ends as it did.
                if self.alarm.rang:
                    raise KeyboardInterrupt  # the clock, not a person: see run_goal
                return _ended(ports, end.status, end, self.progress.checks, end.detail)
            outcome, seconds = ports.run_check()
            elapsed = ports.clock() - self.began
            self.progress, decision = after_check(
                goal, self.progress, self.limits, outcome, elapsed, self.timeout
            )
            checks = self.progress.checks
            ports.record(
                events.GoalCheck(
                    command=goal.command,
                    n=checks,
                    exit_code=outcome.exit_code,
                    ok=outcome.passed,
                    timed_out=outcome.timed_out,
                    seconds=round(seconds, 3),
                    output=output_tail(outcome.output),
                )
            )
            going_on = isinstance(decision, Continue)
            ports.tell(_check_line(goal, checks, outcome, seconds, going_on=going_on))
            if isinstance(decision, Stop):
                return _ended(ports, decision.status, end, checks, decision.detail)
            ports.note("open", checks)
            prompt = decision.message


class WallAlarm:
    """``--max-wall`` as an alarm: when it rings, the task under way is interrupted as Ctrl-C
    interrupts it (the loop keeps what was done, a command running is stopped), and
    ``rang`` says it was the clock, not a person. The main thread only (signals)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.rang = False
        self._previous: Any = None

    def __enter__(self) -> WallAlarm:
        if self.seconds is not None:
            self._previous = signal.signal(signal.SIGALRM, self._ring)
            signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 0.001))
        return self

    def _ring(self, signum: int, frame: FrameType | None) -> None:
        self.rang = True
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self.seconds is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)


def _ended(
    ports: GoalPorts, status: str, end: TaskEnd | None, checks: int, detail: str
) -> GoalRunEnd:
    ports.note(status, checks)
    ports.record(events.GoalEnd(status=status, checks=checks, detail=detail or event_record.ABSENT))
    return GoalRunEnd(status, end, checks, detail)


def _check_line(
    goal: Goal, n: int, outcome: CheckOutcome, seconds: float, *, going_on: bool
) -> str:
    took = f"{seconds:.1f} s"
    if outcome.passed:
        return f"check {n}: `{goal.command}` passed ({took}): the goal is met"
    then = "; going on" if going_on else ""
    if outcome.timed_out:
        return f"check {n}: `{goal.command}` stopped at its time limit ({took}){then}"
    return f"check {n}: `{goal.command}` failed (exit {outcome.exit_code}, {took}){then}"
