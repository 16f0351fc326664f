"""Where the agent loop asks hooks, and what it makes of their answer.

Each point is one call from ``seri.pure.agent.turn``; each asks only when a hook is configured for
its event (``TaskSetup.hook_events``), so a session without hooks runs exactly as before.

- ``prompt_submitted``: UserPromptSubmit. A block refuses the prompt (nothing stored); added
  context follows the prompt as a message.
- ``before_tool``, ``with_hook``: PreToolUse decides with the policy. ``deny`` wins over
  everything; ``ask`` asks the person even where a rule allows (and is a denial where no one
  can be asked); ``allow`` spares the person a question, but never overrides a deny rule or
  a protected path.
- ``after_tool``: PostToolUse. Its context is appended to the tool's result, which is what
  the model reads next.
- ``before_compaction``, ``after_compaction``: PreCompact, and PostCompact with the
  compaction's ledger entry (the ``compaction`` record of the trajectory).
- ``stop_sent_back``: Stop, or SubagentStop in a subagent's loop (its setup asks that one and
  never Stop). A block sends the model back to work with the hook's reason, at most
  ``STOP_LOOP_LIMIT`` times a task; ``continue: false`` lets it end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from seri.pure.agent.effects import NOTHING, Flow, HookDecision, RunHooks, Say, ToolRun, perform
from seri.pure.extensions.hook_events import (
    POST_COMPACT,
    POST_TOOL_USE,
    PRE_COMPACT,
    PRE_TOOL_USE,
    STOP,
    STOP_LOOP_LIMIT,
    SUBAGENT_STOP,
    USER_PROMPT_SUBMIT,
)
from seri.pure.permissions.permission_policy import Decision
from seri.pure.session.records import Message, ToolCall

if TYPE_CHECKING:
    from seri.pure.trajectories import history_events

    class TaskSetupView(Protocol):
        """What of a task's setup the hook points read (of
        ``seri.pure.agent.task_records.TaskSetup``; a protocol, so that this module does not
        import the loop that imports it)."""

        @property
        def hook_events(self) -> frozenset[str]: ...

        @property
        def project(self) -> str: ...


HOOK_MESSAGE_PREFIX = "[hook "
# How a denial by a PreToolUse hook starts its reason (no --allow would let the call run).
HOOK_DENIAL = "a PreToolUse hook"


def hook_message(event: str, text: str) -> Message:
    """What a hook added for the model, as a message of its own."""
    return Message(role="user", text=f"{HOOK_MESSAGE_PREFIX}{event}]\n{text}", kind="hook")


def _asks(setup: TaskSetupView, event: str) -> bool:
    return event in setup.hook_events


def prompt_submitted(setup: TaskSetupView, prompt: Message) -> Flow[tuple[Message, ...] | str]:
    """The messages that follow the prompt, or why the hooks refused it."""
    if not _asks(setup, USER_PROMPT_SUBMIT):
        return ()
    said = yield from perform(RunHooks(USER_PROMPT_SUBMIT, (("prompt", prompt.text),)))
    if said.decision in ("block", "deny") or said.stop:
        why = said.reason or said.stop_reason or "no reason given"
        return f"a UserPromptSubmit hook refused the prompt: {why}"
    return tuple(hook_message(USER_PROMPT_SUBMIT, text) for text in said.context)


def before_tool(
    setup: TaskSetupView, call: ToolCall, arguments: Mapping[str, Any]
) -> Flow[HookDecision]:
    if not _asks(setup, PRE_TOOL_USE):
        return NOTHING
    from seri.pure.extensions.hooks import claude_tool_name, tool_input  # with hooks only

    fields = (
        ("tool_name", claude_tool_name(call.name)),
        ("tool_input", tool_input(call.name, arguments, setup.project)),
        ("tool_use_id", call.id),
    )
    return (yield from perform(RunHooks(PRE_TOOL_USE, fields, call.name, call.id)))


def with_hook(decision: Decision, said: HookDecision) -> Decision:
    """The policy's decision on a call, with the PreToolUse hooks' say in it."""
    why = said.reason or said.stop_reason
    reason = f"{HOOK_DENIAL}: {why}" if why else HOOK_DENIAL
    if said.decision in ("deny", "block") or said.stop:
        return Decision("deny", "", reason)
    if decision.action == "deny":
        return decision
    if said.decision == "ask":
        return Decision("ask", "", reason)
    if said.decision == "allow" and decision.action == "ask":
        return Decision("allow", "", reason)
    return decision


def after_tool(
    setup: TaskSetupView, call: ToolCall, arguments: Mapping[str, Any], run: ToolRun
) -> Flow[ToolRun]:
    """The run, with what PostToolUse hooks told the model after its result."""
    if not _asks(setup, POST_TOOL_USE) or run.interrupted:
        return run
    from seri.pure.extensions.hooks import claude_tool_name, tool_input  # with hooks only

    fields = (
        ("tool_name", claude_tool_name(call.name)),
        ("tool_input", tool_input(call.name, arguments, setup.project)),
        ("tool_response", {"output": run.text, "success": not run.is_error}),
        ("tool_use_id", call.id),
    )
    said = yield from perform(RunHooks(POST_TOOL_USE, fields, call.name, call.id))
    if not said.context:
        return run
    added = "".join(f"\n\n{HOOK_MESSAGE_PREFIX}{POST_TOOL_USE}] {text}" for text in said.context)
    return ToolRun(run.text + added, run.is_error, run.interrupted, run.touched_paths)


def before_compaction(setup: TaskSetupView, trigger: str, focus: str) -> Flow[None]:
    if _asks(setup, PRE_COMPACT):
        fields = (("trigger", trigger), ("custom_instructions", focus))
        yield from perform(RunHooks(PRE_COMPACT, fields, trigger))


def after_compaction(setup: TaskSetupView, entry: history_events.Compaction) -> Flow[None]:
    if _asks(setup, POST_COMPACT):
        fields = (("trigger", entry.trigger), ("compaction", entry.export()))
        yield from perform(RunHooks(POST_COMPACT, fields, entry.trigger))


def stop_sent_back(setup: TaskSetupView, sent_back: int, answer: str) -> Flow[Message | None]:
    """The message that sends the model back to work, or None: the task may end."""
    event = SUBAGENT_STOP if _asks(setup, SUBAGENT_STOP) else STOP
    if not _asks(setup, event):
        return None
    fields = (("stop_hook_active", sent_back > 0), ("last_assistant_message", answer))
    said = yield from perform(RunHooks(event, fields))
    if said.decision != "block" or said.stop:
        return None
    if sent_back >= STOP_LOOP_LIMIT:
        yield Say(
            f"{event} hooks sent the model back {sent_back} times in this task, the most seri "
            f"allows ({STOP_LOOP_LIMIT}); the task ends here"
        )
        return None
    return hook_message(event, said.reason or f"a {event} hook asks you to go on")
