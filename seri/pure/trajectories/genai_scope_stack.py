"""The scope stack of the GenAI trace fold: opening, settling and closing its spans.

``ScopeStack`` is one step's working copy of the fold's state: it finds (or opens) the
scope a record belongs to, ends scopes as spans (``agent_span``, ``tool_span``) with the
run's tags, and hands the new state back. The spans of model calls (``genai_call_spans``),
of tools and subagents (``genai_tool_spans``) and the dispatch (``genai_trace``) build on it.
"""

from __future__ import annotations

import attrs

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.trajectories import events, tool_events
from seri.pure.trajectories.genai_attributes import (
    AGENT_NAME,
    event_attributes,
    scalar_items,
    usage_attributes,
)
from seri.pure.trajectories.genai_metrics import MetricObservation
from seri.pure.trajectories.genai_scopes import (
    AgentRole,
    AgentScope,
    RunContext,
    Scope,
    ToolSpanScope,
    TraceOutput,
    TraceState,
    TrajectoryRecord,
    span_id_of,
    trace_id_of,
)
from seri.pure.trajectories.otlp_model import (
    KIND_INTERNAL,
    STATUS_ERROR,
    STATUS_UNSET,
    AttrValue,
    Span,
    SpanEvent,
)

# Records that happen inside a tool's run: they leave the tool's span open (an MCP server's
# life is noticed on a call to it, and recorded before the call's result).
_INSIDE_TOOL = frozenset(
    {
        tool_events.CheckpointEvent.type,
        tool_events.Edit.type,
        tool_events.Check.type,
        tool_events.Denial.type,
        tool_events.SessionRuleEvent.type,
        tool_events.MemoryStaged.type,
        tool_events.SubagentStart.type,
        tool_events.McpServer.type,
        events.HookRun.type,
    }
)


class ScopeStack:
    """What one step of the fold works on: the state's scopes as a stack. It works on copies
    and hands a new state back, so the state it was given is never changed."""

    def __init__(self, state: TraceState) -> None:
        self.content = state.content
        self.run = state.run
        self.stack: list[Scope] = list(state.stack)
        self.mark = state.mark_ns
        self.start_known = state.start_known
        self.during_call = list(state.during_call)
        self.spans: list[Span] = []
        self.observations: list[MetricObservation] = []

    def done(self) -> tuple[TraceState, TraceOutput]:
        state = TraceState(
            self.content,
            self.run,
            tuple(self.stack),
            self.mark,
            self.start_known,
            tuple(self.during_call),
        )
        return state, TraceOutput(tuple(self.spans), tuple(self.observations))

    def event(self, record: TrajectoryRecord, at: int) -> SpanEvent:
        return SpanEvent(
            f"seri.{record.type}", at, event_attributes(record.type, record.data, self.content)
        )

    # -- scopes --------------------------------------------------------------------------------

    def settle_tools(self, record: TrajectoryRecord) -> None:
        """A record outside any tool's run ends the tool spans left open on top (a denied
        call has no result; a recording cut short has neither)."""
        if record.type in _INSIDE_TOOL:
            return
        while self.stack and isinstance(self.stack[-1], ToolSpanScope):
            self.close_top(self.stack[-1].last_ns)

    def innermost_scope(self, record: TrajectoryRecord, at: int) -> int:
        """The index of the scope a record's event belongs to, opening a task if none is open."""
        if self.stack and (
            record.type in _INSIDE_TOOL or record.type == tool_events.ToolResult.type
        ):
            return len(self.stack) - 1
        return self.agent(record, at)

    def agent(self, record: TrajectoryRecord, at: int, *, maintenance: bool = False) -> int:
        """The index of the innermost agent scope, opening one when there is none.

        A compaction's records may open a scope before anyone knows whether it is the start
        of a task (an automatic compaction) or a compaction asked for between tasks; the
        scope stays "pending" until a record says which."""
        if self.stack:
            root = self.stack[0]
            assert isinstance(root, AgentScope)
            if root.role == "standalone" and (
                not maintenance
                or (
                    root.compacted
                    and record.type in (events.SummaryCall.type, events.Overflow.type)
                )
            ):
                self.close_scope(0, root.last_ns)
            elif root.role == "pending" and not maintenance:
                self.stack[0] = attrs.evolve(root, role="task")
        if not self.stack:
            self.open_root(record, "pending" if maintenance else "task")
        index = max(i for i, scope in enumerate(self.stack) if isinstance(scope, AgentScope))
        scope = self.stack[index]
        self.stack[index] = attrs.evolve(scope, last_ns=max(scope.last_ns, at))
        return index

    def open_root(self, record: TrajectoryRecord, role: AgentRole) -> None:
        run = self.current_run()
        estimated = run.interactive and not self.start_known
        self.start_known = False
        self.stack.append(
            AgentScope(
                role=role,
                trace_id=trace_id_of(run.run, record.ordinal),
                span_id=span_id_of(run.run, record.ordinal, "agent"),
                parent_id=b"",
                start_ns=self.mark,
                last_ns=self.mark,
                conversation=run.session,
                model=run.model,
                estimated_start=estimated,
            )
        )

    def current_run(self) -> RunContext:
        assert self.run is not None
        return self.run

    def close_top_level_maintenance(self) -> None:
        if self.stack:
            root = self.stack[0]
            if isinstance(root, AgentScope) and root.role in ("pending", "standalone"):
                self.close_scope(0, root.last_ns)

    def add_event(self, index: int, event: SpanEvent) -> None:
        scope = self.stack[index]
        self.stack[index] = attrs.evolve(
            scope, events=(*scope.events, event), last_ns=max(scope.last_ns, event.time_ns)
        )

    def close_top(self, end: int) -> None:
        self.close_scope(len(self.stack) - 1, end)

    def close_scope(self, index: int, end: int) -> None:
        """End the scope at ``index`` (and every scope above it first) at ``end``."""
        while len(self.stack) > index + 1:
            self.close_scope(len(self.stack) - 1, self.stack[-1].last_ns)
        scope = self.stack.pop()
        end = max(end, scope.start_ns, scope.last_ns)
        span = (
            self.agent_span(scope, end) if isinstance(scope, AgentScope) else tool_span(scope, end)
        )
        self.emit(span)
        if self.stack:
            parent = self.stack[-1]
            self.stack[-1] = attrs.evolve(parent, last_ns=max(parent.last_ns, end))
            if isinstance(scope, AgentScope):
                self.add_totals(scope.totals)

    def emit(self, span: Span) -> None:
        """A finished span, with its run's tags (every span carries them, so a backend can
        group or filter any span by them without walking up to its root)."""
        tags = self.current_run().tags
        if tags:
            span = attrs.evolve(span, attributes=(*span.attributes, *tags))
        self.spans.append(span)

    def add_totals(self, totals: UsageTotals) -> None:
        """A subagent's usage counts toward the agent that started it."""
        for index in range(len(self.stack) - 1, -1, -1):
            scope = self.stack[index]
            if isinstance(scope, AgentScope):
                self.stack[index] = attrs.evolve(scope, totals=scope.totals.plus(totals))
                return

    def close_run(self) -> None:
        while self.stack:
            self.close_top(self.stack[-1].last_ns)
        self.during_call.clear()

    def agent_span(self, scope: AgentScope, end: int) -> Span:
        run = self.current_run()
        standalone = scope.role in ("pending", "standalone")
        common: list[tuple[str, AttrValue]] = [
            ("gen_ai.conversation.id", scope.conversation),
            ("seri.run.id", run.run),
        ]
        if standalone:
            attributes = [("seri.operation", "compaction"), *common]
            name = "compaction"
        else:
            name = f"invoke_agent {AGENT_NAME}"
            attributes = [
                ("gen_ai.operation.name", "invoke_agent"),
                *run.server.attributes(),
                ("gen_ai.agent.name", AGENT_NAME),
                *common,
            ]
            if run.version:
                attributes.append(("gen_ai.agent.version", run.version))
            if scope.model:
                attributes.append(("gen_ai.request.model", scope.model))
            attributes.extend(
                scalar_items(
                    (
                        ("seri.task.status", scope.status or None),
                        ("seri.task.turns", scope.turns),
                        ("seri.context_window", run.context_window),
                    )
                )
            )
            if scope.role == "subagent":
                attributes.append(("seri.subagent", True))
        attributes.append(("seri.model_calls", scope.totals.calls))
        attributes.extend(usage_attributes(scope.totals))
        if scope.estimated_start:
            attributes.append(("seri.start_estimated", True))
        code, error_type, message = STATUS_UNSET, "", ""
        if not standalone and scope.status not in ("", "done"):
            code, error_type, message = STATUS_ERROR, scope.status, scope.error
        elif not standalone and not scope.status:
            code, error_type = STATUS_ERROR, "unfinished"
            message = "the recording ends before the task did"
        if error_type:
            attributes.append(("error.type", error_type))
        return Span(
            trace_id=scope.trace_id,
            span_id=scope.span_id,
            parent_span_id=scope.parent_id,
            name=name,
            kind=KIND_INTERNAL,
            start_ns=scope.start_ns,
            end_ns=end,
            attributes=tuple(attributes),
            events=clamped(scope.events, scope.start_ns, end),
            status_code=code,
            status_message=message,
        )

    def set_last_call(self, index: int, what: str) -> None:
        scope = self.stack[index]
        if isinstance(scope, AgentScope):
            self.stack[index] = attrs.evolve(scope, last_call=what)

    def agent_index(self) -> int:
        return max(
            (i for i, scope in enumerate(self.stack) if isinstance(scope, AgentScope)), default=0
        )


def tool_span(scope: ToolSpanScope, end: int) -> Span:
    attributes: list[tuple[str, AttrValue]] = [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", scope.name),
        ("gen_ai.tool.type", "function"),
    ]
    if scope.call_id:
        attributes.append(("gen_ai.tool.call.id", scope.call_id))
    attributes.extend(scope.attributes)
    error_type = next((value for key, value in scope.attributes if key == "error.type"), None)
    if scope.denied and error_type is None:
        error_type = "denied"
        attributes.append(("error.type", error_type))
    finished = any(key == "seri.tool.ok" for key, _ in scope.attributes)
    if not finished and not scope.denied:
        error_type = "unfinished"
        attributes.append(("error.type", error_type))
    return Span(
        trace_id=scope.trace_id,
        span_id=scope.span_id,
        parent_span_id=scope.parent_id,
        name=f"execute_tool {scope.name}" if scope.name else "execute_tool",
        kind=KIND_INTERNAL,
        start_ns=scope.start_ns,
        end_ns=end,
        attributes=tuple(attributes),
        events=clamped(scope.events, scope.start_ns, end),
        status_code=STATUS_ERROR if error_type else STATUS_UNSET,
        status_message=scope.message,
    )


def clamped(events: tuple[SpanEvent, ...], start: int, end: int) -> tuple[SpanEvent, ...]:
    """Events inside their span's time, whatever the clock did between records."""
    return tuple(
        attrs.evolve(event, time_ns=min(max(event.time_ns, start), end))
        if not start <= event.time_ns <= end
        else event
        for event in events
    )
