"""``seri chat -p … --output-format json|stream-json``: one task, and always one result record.

Whatever ends the run (the answer, a budget, a failure before or during the task, Ctrl-C or
SIGTERM), the last line on stdout is the ``result`` record (``seri.pure.agent.run_result``), and
the process exits with the status that record names. Everything for people goes to stderr.
Once the task is over, further SIGINT/SIGTERM are held off until the record is written.
The record's ``answer`` and ``detail``, and every failure said on stderr, pass the redactor the
store uses (the key, secret-looking variables' values, well-known key shapes): an answer that
quotes the key prints ``[REDACTED]``, as ``seri sessions show`` does.
"""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any

from seri.pure.agent.run_result import RunEnding, RunResult, ending_of_task, failed, interrupted
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.errors import SeriError
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.agent.run_output import EventStream, JsonLines, unfinished_line

if TYPE_CHECKING:
    from seri.runtime.agent.ports import EventObserver
    from seri.runtime.session.controller import SessionController

# Opens the run's session, its events watched by the observers given.
OpenSession = Callable[[tuple["EventObserver", ...]], "SessionController"]


class Signals:
    """SIGTERM ends the run as Ctrl-C does (KeyboardInterrupt where it is), and which of the
    two came is remembered for the exit status."""

    def __init__(self) -> None:
        self.caught = 0

    def _interrupt(self, signum: int, frame: FrameType | None) -> None:
        self.caught = signum
        raise KeyboardInterrupt

    @contextmanager
    def as_interrupts(self) -> Iterator[None]:
        previous = {
            signum: signal.signal(signum, self._interrupt)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }
        try:
            yield
        finally:
            # From here on the result must get out whole: later signals are held off.
            for signum in previous:
                signal.signal(signum, signal.SIG_IGN)


def run_headless(output_format: str, open_session: OpenSession, prompt: Callable[[], str]) -> int:
    """Run one task; write its result record (after its events, for stream-json)."""
    began = time.monotonic()
    lines = JsonLines()
    signals = Signals()
    session: SessionController | None = None

    observers: tuple[EventObserver, ...] = ()
    if output_format == "stream-json":
        observers = (EventStream(lines),)
    ending: RunEnding
    with signals.as_interrupts():
        try:
            session = open_session(observers)
            from seri.runtime.agent.goal_session import run_toward_goal

            end = run_toward_goal(session, _task_text(prompt), _say)
            if end.status != "done":
                print(unfinished_line(end, session.redact), file=sys.stderr)
            ending = ending_of_task(
                end.status,
                session.redact(end.answer),
                session.redact(end.detail),
                end.turns,
                by_user=end.by_user,
                signal_number=signals.caught,
            )
        except KeyboardInterrupt:
            print("seri: interrupted", file=sys.stderr)
            ending = interrupted(session.last_task_turns if session else 0, signals.caught)
        except Exception as exc:  # noqa: BLE001 - every failure still ends in a result record
            ending = _failure(exc)
    ending = _closed(session, ending)
    result = RunResult(
        ending,
        usage=session.usage() if session is not None else UsageTotals(),
        duration=time.monotonic() - began,
        at=time.time(),
        session=(session.session_id or None) if session is not None else None,
        run=session.run_id if session is not None else None,
        **_goal_and_compaction(session),
    )
    lines.put(result.export())
    lines.close()
    return ending.exit_status


def _say(line: str) -> None:
    print(neutralise(f"seri: {line}"), file=sys.stderr)


def _goal_and_compaction(session: SessionController | None) -> dict[str, Any]:
    """The result record's ``goal`` and ``compactions`` (see ``goal_session``)."""
    if session is None or not session.session_id:
        return {}
    from seri.runtime.agent.goal_session import result_fields

    try:
        return result_fields(session)
    except Exception:  # noqa: BLE001 - a store that failed has said so; the record goes out
        return {}


def _task_text(prompt: Callable[[], str]) -> str:
    text = prompt()
    if not text.strip():
        raise SeriError("the prompt is empty; give a task with -p TEXT or on stdin")
    return text


def _failure(exc: BaseException) -> RunEnding:
    from seri.runtime.agent.running import describe_failure

    described = describe_failure(exc)
    if described is None:
        described = (f"internal error: {type(exc).__name__}: {exc}", 1)
    message, code = described
    message = environment_redactor().text(message)
    print(neutralise(f"seri: {message}"), file=sys.stderr)
    return failed(message, code)


def environment_redactor() -> Redactor:
    """The store's redactor, built where no chat is open (a failure before one was): the key
    variables' and every secret-looking variable's values, and the well-known shapes."""
    import os

    from seri.pure.permissions.trust import SERI_KEY_VARIABLES
    from seri.pure.trajectories.redaction import secrets_from_environment

    keys = (os.environ.get(name, "") for name in SERI_KEY_VARIABLES)
    return Redactor.of((*keys, *secrets_from_environment(os.environ)))


def _closed(session: SessionController | None, ending: RunEnding) -> RunEnding:
    """Close the session (its last events, the lease); a failure to close a run that had
    otherwise ended well is the run's failure."""
    if session is None:
        return ending
    try:
        session.close()
    except Exception as exc:  # noqa: BLE001 - reported in the record like any failure
        failure = _failure(exc)
        return failure if ending.status == "done" else ending
    return ending
