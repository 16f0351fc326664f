"""What a front-end supplies to a session: who is told and asked while it works.

The session controller holds no terminal. It reaches the person (or the editor, or the
script) through these ports only, so the terminal chat, ``-p`` and an ACP server differ in
which objects fill them, and a test fills them with a scripted person.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from seri.pure.agent.effects import ToolRun
from seri.pure.session.records import ToolCall
from seri.runtime.agent.ports import Person

# A line for the log channel (stderr on a terminal): what opening or closing a session did
# ("resumed session …", "forked …"), said when it happens.
Tell = Callable[[str], None]


class FrontEnd(Person, Protocol):
    """Who a session works for: the ``Person`` the agent loop tells and asks (tool calls,
    approvals, notices), the live streams of a task, and the approval of a project's MCP
    server not approved yet (asked before the first task; False when no one can answer)."""

    def model_text(self, text: str) -> None: ...

    def model_reasoning(self, text: str) -> None: ...

    def command_output(self, chunk: bytes) -> None: ...

    def approve_server(self, name: str, review: str) -> bool: ...


class ToolHooks(Protocol):
    """Run around every tool call a task makes, once the permission rules (and the person)
    let it run: ``before`` may still refuse it (the reason reaches the model as the call's
    error result), ``after`` sees its result. Hooks that watch the rest of a run (a
    compaction, a task's end) watch its events (an ``EventObserver``) or ``run_task``'s end."""

    def before(self, call: ToolCall, arguments: Mapping[str, Any]) -> str | None: ...

    def after(self, call: ToolCall, arguments: Mapping[str, Any], run: ToolRun) -> None: ...


def to_stderr(text: str) -> None:
    """The default ``Tell``: the line on stderr, as written."""
    print(text, file=sys.stderr)
