"""How a headless run (``seri chat -p``) ended, as the one ``result`` record a script reads.

The record is computed from the run's totals and how it ended, nothing else: so the same
values come out whatever ended the run (the model's answer, a budget, a failure, Ctrl-C or
SIGTERM), and its ``exit_status`` is, by construction, the status the process exits with.
``--output-format json`` writes it alone; ``stream-json`` writes it as the last line, after
the run's events (whose lines have the same leading keys: ``type``, ``session``, ``run``,
``at``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

import attrs

from seri.pure.agent.goals import exit_status_of
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.errors import EXIT_INTERRUPTED, EXIT_OK, EXIT_UNFINISHED, EXIT_USAGE
from seri.pure.terminal.timestamps import iso_utc

RunStatus = Literal[
    "done",
    "max_turns",
    "budget",
    "length",
    "overflow",
    "error",
    "interrupted",
    # A goal run's own ends, and the compaction contract's (seri.pure.agent.goals: exit 3 to 6).
    "stalled",
    "max_checks",
    "wall",
    "context_exhausted",
]
RUN_STATUSES: tuple[str, ...] = get_args(RunStatus)

# A run ended by SIGTERM exits as shells report a process killed by it: 128 + 15.
EXIT_TERMINATED = 143
SIGNAL_TERMINATE = 15


@attrs.frozen
class RunEnding:
    """How the run ended: its status, the exit status that follows, the answer (done) or
    why it did not finish, and the model turns it took."""

    status: RunStatus
    exit_status: int
    answer: str = ""
    error: str = ""
    turns: int = 0


def ending_of_task(
    status: str, answer: str, detail: str, turns: int, *, by_user: bool, signal_number: int = 0
) -> RunEnding:
    """The ending of a task the loop ran to its end (``TaskEnd``'s status and fields).

    ``by_user``: the person (or a signal) interrupted it, not a cut stream; ``signal_number``
    is the signal that did, when one did (SIGTERM exits 143, Ctrl-C 130).
    """
    if status == "done":
        return RunEnding("done", EXIT_OK, answer=answer, turns=turns)
    if status == "refused":
        # The task itself was refused before anything was stored (a prompt too big for the
        # window): bad input, so exit 2, as the text form exits.
        return RunEnding("error", EXIT_USAGE, error=detail or "the task was refused", turns=turns)
    known: RunStatus = status if status in RUN_STATUSES else "error"  # type: ignore[assignment]
    if known == "interrupted":
        if by_user:
            return interrupted(turns, signal_number, detail)
        # Nobody interrupted it (a stream the provider cut, a server gone silent): a failed
        # turn, so the status says what the exit status 1 says.
        known = "error"
    return RunEnding(known, exit_status_of(known), error=detail or known, turns=turns)


def interrupted(turns: int, signal_number: int = 0, detail: str = "") -> RunEnding:
    """Ended by Ctrl-C (SIGINT) or SIGTERM, wherever the run was."""
    if signal_number == SIGNAL_TERMINATE:
        return RunEnding(
            "interrupted", EXIT_TERMINATED, error=detail or "terminated (SIGTERM)", turns=turns
        )
    return RunEnding("interrupted", EXIT_INTERRUPTED, error=detail or "interrupted", turns=turns)


def failed(error: str, exit_status: int, turns: int = 0) -> RunEnding:
    """Ended by a failure outside the loop (no API key, a damaged store, a full disk): status
    ``error`` with the exit status the failure deserves (2 for input, else 1)."""
    status = exit_status if exit_status in (EXIT_UNFINISHED, EXIT_USAGE) else EXIT_UNFINISHED
    return RunEnding("error", status, error=error or "the run failed", turns=turns)


@attrs.frozen
class RunResult:
    """The ``result`` record: the ending, with the run's totals."""

    ending: RunEnding
    # Every model call of the run: its tasks', the summarizer's and its subagents'.
    usage: UsageTotals
    duration: float  # seconds
    at: float  # when it ended (epoch s)
    session: str | None = None
    run: str | None = None
    # The session's goal as the run left it (text, command, status, checks), if it has one.
    goal: Mapping[str, Any] | None = None
    # What the run's compactions cost (count, the summarizer's tokens and cost, the tokens
    # written to the provider's cache again); None when none ran.
    compaction: Mapping[str, Any] | None = None

    def export(self) -> dict[str, Any]:
        usage = self.usage
        share = usage.cached_share()
        ending = self.ending
        return {
            "type": "result",
            "session": self.session,
            "run": self.run,
            "at": iso_utc(self.at),
            "status": ending.status,
            "exit_status": ending.exit_status,
            "turns": ending.turns,
            "usage": {
                "calls": usage.calls,
                "reported_calls": usage.reported,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "reasoning_tokens": usage.reasoning_tokens,
                "cached_tokens": usage.cached_tokens,
                "cache_write_tokens": usage.cache_write_tokens,
            },
            "cost": usage.total_cost,
            "cached_share": None if share is None else round(share, 4),
            "duration_ms": max(0, round(self.duration * 1000)),
            "answer": ending.answer,
            "error": ending.error or None,
            "goal": None if self.goal is None else dict(self.goal),
            "compactions": None if self.compaction is None else dict(self.compaction),
        }
