"""Every tool call of a model's reply gets exactly one result.

A call is checked (complete, not a duplicate id, a known tool, arguments that parse, a path
inside the project), asked of the hooks and the permission policy, shown to the person when
approval is needed, run, and its result cut to the window's cap. The rules a touched path
fires are added after the results. What only a call needs (the permission checks, the
approval's "always" rules) is imported where it is used: a call without tools never needs it.
"""

from __future__ import annotations

from typing import Any

import attrs

from seri.pure.agent.effects import (
    AskPerson,
    CheckEdit,
    Flow,
    ModelReply,
    Record,
    ResolvedPath,
    ResolvePath,
    RunTool,
    ToolRun,
    perform,
)
from seri.pure.agent.rules import rules_fired_by
from seri.pure.agent.task_loop import TaskLoop
from seri.pure.extensions import hook_points
from seri.pure.permissions.permission_policy import Policy, with_allowed
from seri.pure.session.records import Message, ToolCall
from seri.pure.tools.tool_arguments import parse_arguments
from seri.pure.tools.tool_specs import ToolSpec, find_spec
from seri.pure.trajectories import history_events, tool_events

INTERRUPTED_RESULT = "interrupted by user: the tool call did not finish"
NOT_RUN_RESULT = "not run: the turn was interrupted before this call"


def answer_calls(loop: TaskLoop, reply: ModelReply) -> Flow[bool]:
    """Give every tool call exactly one result; returns True if the person interrupted."""
    interrupted = False
    touched: list[str] = []
    seen_ids: set[str] = set()
    for call in reply.message.tool_calls:
        if interrupted:
            yield loop.add((_result(call, NOT_RUN_RESULT, is_error=True),))
            continue
        run = yield from _one_call(loop, call, reply, seen_ids)
        seen_ids.add(call.id)
        interrupted = run.interrupted
        touched.extend(run.touched_paths)
        yield loop.add((_result(call, run.text, is_error=run.is_error),))
    fired = rules_fired_by(loop.setup.glob_rules, touched, frozenset(loop.fired))
    for rule in fired:
        loop.fired.add(rule.name)
        yield Record(history_events.RuleEvent(name=rule.name, paths=tuple(touched)))
        yield loop.add((Message(role="user", text=rule.message_text(), kind="rule"),))
    return interrupted


def _result(call: ToolCall, text: str, *, is_error: bool) -> Message:
    return Message(
        role="tool", text=text, tool_call_id=call.id, tool_name=call.name, is_error=is_error
    )


def _one_call(
    loop: TaskLoop, call: ToolCall, reply: ModelReply, seen_ids: set[str]
) -> Flow[ToolRun]:
    from seri.pure.permissions.approval import always_rules
    from seri.pure.permissions.permissions import decide

    setup = loop.setup
    yield Record(tool_events.ToolCallEvent(id=call.id, name=call.name, arguments=call.arguments))
    rejection = ""
    if not reply.tool_calls_runnable:
        rejection = f"not run: {reply.unrunnable_reason or 'the call arrived incomplete'}"
    elif call.id in seen_ids:
        rejection = f"not run: duplicate tool call id {call.id}"
    spec = find_spec(setup.tools, call.name)
    if not rejection and spec is None:
        rejection = (
            f"not run: unknown tool '{call.name}'; the tools are {', '.join(setup.tool_names)}"
        )
    arguments: dict[str, Any] = {}
    if not rejection:
        parsed = parse_arguments(call, spec)
        if isinstance(parsed, str):
            rejection = f"not run: {parsed}"
        else:
            arguments = parsed
    if rejection:
        yield Record(tool_events.ToolResult(id=call.id, ok=False, error=rejection))
        return ToolRun(rejection, is_error=True)
    assert spec is not None
    where = ResolvedPath(None, None)
    raw_path = arguments.get(spec.path_args[0]) if spec.path_args else None
    if isinstance(raw_path, str):
        where = yield from perform(ResolvePath(raw_path))
        if where.refused:
            yield Record(
                tool_events.Denial(
                    id=call.id, name=call.name, rule="(project)", reason=where.refused
                )
            )
            return ToolRun(f"denied: {where.refused}", is_error=True)
    verdict = yield from hook_points.before_tool(setup, call, arguments)
    decision = decide(
        loop.policy,
        call.name,
        arguments,
        project_relative_path=where.relative,
        resolved_path=where.absolute,
        spec=spec,
    )
    decision = hook_points.with_hook(decision, verdict)
    if decision.action == "ask" and _readable(loop.policy, spec, where):
        failed = yield from perform(CheckEdit(call, arguments, str(where.relative)))
        if failed is not None:
            size = len(failed.text.encode("utf-8", "replace"))
            yield Record(
                tool_events.ToolResult(
                    id=call.id, name=call.name, ok=False, bytes=size, text=failed.text
                )
            )
            return failed
    if decision.action == "deny" or (decision.action == "ask" and not setup.interactive):
        reason = decision.reason
        if decision.action == "ask":
            reason = f"{reason}; approval is needed and no one can be asked in this mode"
        text = f"denied by {'rule ' + decision.rule if decision.rule else 'policy'}: {reason}"
        yield Record(
            tool_events.Denial(
                id=call.id, name=call.name, rule=decision.rule, reason=reason, by="policy"
            )
        )
        return ToolRun(text, is_error=True)
    if decision.action == "ask":
        offered = always_rules(
            loop.policy,
            call.name,
            arguments,
            relative_path=where.relative,
            absolute_path=where.absolute,
            spec=spec,
        )
        answer = yield from perform(
            AskPerson(call, decision.reason, arguments, where.relative, offered)
        )
        if not answer.approved:
            said = f"denied by user: {answer.reason}" if answer.reason else "denied by user"
            yield Record(
                tool_events.Denial(id=call.id, name=call.name, rule="", reason=said, by="user")
            )
            return ToolRun(said, is_error=True)
        if answer.always:
            loop.policy = with_allowed(loop.policy, answer.always)
            yield Record(tool_events.SessionRuleEvent(id=call.id, rules=answer.always))
    run = yield from perform(RunTool(call, arguments, loop.window.result_cap_chars))
    if run.interrupted:
        run = attrs.evolve(run, text=run.text or INTERRUPTED_RESULT, is_error=True)
    whole = len(run.text.encode("utf-8", "replace"))
    run = attrs.evolve(run, text=(yield from loop.capped_result(run.text)))
    run = yield from hook_points.after_tool(setup, call, arguments, run)
    yield Record(
        tool_events.ToolResult(
            id=call.id,
            name=call.name,
            ok=not run.is_error,
            interrupted=run.interrupted,
            bytes=whole,
            # The recorder stores a large result as {"elided": true, "originalBytes": N}.
            text=run.text,
        )
    )
    return run


def _readable(policy: Policy, spec: ToolSpec, where: ResolvedPath) -> bool:
    """Whether an edit may be checked against its file before anyone is asked: only when
    read_file may read that file, so that a refused edit tells the model nothing about a
    file it could not read."""
    if spec.name != "edit" or where.relative is None:
        return False
    from seri.pure.permissions.permissions import decide

    read = decide(
        policy,
        "read_file",
        {"path": where.relative},
        project_relative_path=where.relative,
        resolved_path=where.absolute,
    )
    return read.action == "allow"
