"""The spans of tool calls and subagents in the GenAI trace fold.

A tool call opens an ``execute_tool {name}`` span (INTERNAL) that its result ends (a denial
marks it); a subagent is an ``invoke_agent`` span inside the tool span that started it,
ended by its ``subagent_end``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.trajectories.genai_attributes import scalar_items
from seri.pure.trajectories.genai_scope_stack import ScopeStack
from seri.pure.trajectories.genai_scopes import (
    AgentScope,
    ToolSpanScope,
    TrajectoryRecord,
    data_text,
    span_id_of,
)
from seri.pure.trajectories.otlp_model import Attributes


class ToolSpans(ScopeStack):
    """The fold's handlers of tool calls, their results and denials, and subagents."""

    def tool_call(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        index = self.agent(record, at)
        self.set_last_call(index, "")
        parent = self.stack[index]
        run = self.current_run()
        data = record.data
        name = data_text(data.get("name"))
        call_id = data_text(data.get("id"))
        self.stack.append(
            ToolSpanScope(
                trace_id=parent.trace_id,
                span_id=span_id_of(run.run, record.ordinal, "tool"),
                parent_id=parent.span_id,
                start_ns=max(at, parent.start_ns),
                last_ns=max(at, parent.start_ns),
                call_id=call_id,
                name=name,
                attributes=self.content.pairs(data, {"arguments": "gen_ai.tool.call.arguments"}),
            )
        )

    def tool_result(self, record: TrajectoryRecord, at: int) -> None:
        data = record.data
        top = self.stack[-1] if self.stack else None
        if not (isinstance(top, ToolSpanScope) and top.call_id == data.get("id")):
            # A result without its call (a recording that starts mid-call): a span of its own.
            self.settle_tools(record)
            index = self.agent(record, at)
            self.tool_call(record, self.stack[index].last_ns)
            top = self.stack[-1]
        assert isinstance(top, ToolSpanScope)
        outcome = _tool_outcome(data, top.denied)
        extra = scalar_items(
            (
                ("seri.tool.ok", data.get("ok")),
                ("seri.tool.interrupted", data.get("interrupted")),
                ("seri.tool.result_bytes", data.get("bytes")),
            )
        )
        if data.get("ok") is True:
            extra += self.content.pairs(data, {"text": "gen_ai.tool.call.result"})
        elif "text" in data:
            extra += self.content.pairs(data, {"text": "seri.tool.error_output"})
        self.stack[-1] = attrs.evolve(
            top,
            attributes=(*top.attributes, *extra, *outcome),
            last_ns=max(top.last_ns, at),
            # seri's reason quotes the call (its arguments' keys, a parse error): content.
            message=self.content.text(data.get("error")) or "",
        )
        self.close_top(at)
        self.set_last_call(self.agent_index(), "")

    def denial(self, record: TrajectoryRecord, at: int) -> None:
        top = self.stack[-1] if self.stack else None
        if isinstance(top, ToolSpanScope) and top.call_id == record.data.get("id"):
            self.stack[-1] = attrs.evolve(top, denied=True)
        index = self.innermost_scope(record, at)
        self.add_event(index, self.event(record, at))

    def subagent_start(self, record: TrajectoryRecord, at: int) -> None:
        index = self.innermost_scope(record, at)
        parent = self.stack[index]
        run = self.current_run()
        child = record.data.get("child")
        self.add_event(index, self.event(record, at))
        self.stack.append(
            AgentScope(
                role="subagent",
                trace_id=parent.trace_id,
                span_id=span_id_of(run.run, record.ordinal, "subagent"),
                parent_id=parent.span_id,
                start_ns=max(at, parent.start_ns),
                last_ns=max(at, parent.start_ns),
                conversation=child if isinstance(child, str) and child else run.session,
                model=run.model,
            )
        )

    def subagent_end(self, record: TrajectoryRecord, at: int) -> None:
        child = record.data.get("child")
        found = [
            i
            for i, scope in enumerate(self.stack)
            if isinstance(scope, AgentScope)
            and scope.role == "subagent"
            and scope.conversation == child
        ]
        if not found:
            self.settle_tools(record)
            self.add_event(self.agent(record, at), self.event(record, at))
            return
        index = found[-1]
        scope = self.stack[index]
        assert isinstance(scope, AgentScope)
        status = record.data.get("status")
        if isinstance(status, str) and (not scope.status or status != "done"):
            turns = record.data.get("turns")
            self.stack[index] = attrs.evolve(
                scope,
                status=status,
                turns=turns if isinstance(turns, int) else scope.turns,
            )
        self.close_scope(index, at)


def _tool_outcome(data: Mapping[str, Any], denied: bool) -> Attributes:
    if denied:
        return (("error.type", "denied"),)
    if data.get("interrupted") is True:
        return (("error.type", "interrupted"),)
    if "error" in data:
        return (("error.type", "rejected"),)
    if data.get("ok") is False:
        return (("error.type", "tool_error"),)
    return ()
