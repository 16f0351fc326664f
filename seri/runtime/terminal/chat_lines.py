"""The lines of a chat, typed or piped: a slash command or a task, and what each did."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from seri.pure.inputs.errors import EXIT_OK
from seri.pure.terminal.terminal_text import neutralise
from seri.runtime.terminal.slash import run_slash
from seri.runtime.terminal.slash_handlers import LineOutcome

if TYPE_CHECKING:
    from seri.runtime.terminal.chat_session import ChatSession


def handle_line(chat: ChatSession, line: str) -> LineOutcome:
    """A line typed (or piped): a slash command or a task."""
    if line.startswith("/"):
        return run_slash(chat, line)
    if line.startswith("!"):
        from seri.runtime.tools.shell_line import run_shell_line

        return run_shell_line(chat, line[1:])
    if "@" in line:
        from seri.runtime.agent.mentions import attach_mentioned

        line = attach_mentioned(chat, line)
    from seri.runtime.agent.goal_session import chat_task

    end = chat_task(chat, line)
    return chat.report(end, print_answer=not chat.interactive)


def line_outcome(chat: ChatSession, line: str) -> LineOutcome:
    """Run one line; a failure ends that line (with its message), not the session.

    A full disk or a refused command is reported like any expected error, and the next
    line runs in the same process once the cause is gone.
    """
    from seri.runtime.agent.running import describe_failure

    try:
        return handle_line(chat, line)
    except Exception as exc:
        described = describe_failure(exc)
        if described is None:
            raise
        message, status = described
        print(neutralise(f"seri: {message}"), file=sys.stderr)
        return status


def scripted(chat: ChatSession) -> int:
    """Each stdin line is what a person would type; the exit status is the last task's."""
    status = EXIT_OK
    for raw in sys.stdin:
        line = raw.rstrip("\n")
        if not line.strip():
            continue
        outcome = line_outcome(chat, line)
        if outcome == "exit":
            break
        if isinstance(outcome, int):
            status = outcome
    return status
