"""seri's trajectory records as OpenTelemetry spans, after the GenAI semantic conventions.

Each task is a trace: an ``invoke_agent seri`` root (INTERNAL) holding a ``chat {model}``
span (CLIENT) per model call and an ``execute_tool {name}`` span (INTERNAL) per tool call.
A subagent is an ``invoke_agent seri`` inside the ``execute_tool task`` span that started
it, with its own session as ``gen_ai.conversation.id``. Retries and lowered output budgets
are events on the call they happened in; compactions, shrinks, fired rules and model
switches on the agent's span; denials, checkpoints, edits and checks on the tool's. A
compaction asked for between tasks (``/compact``, ``seri compact``) is a root span of its
own, ``compaction``, with its summarizer calls inside. A refused call (an overflow, a
failure before any answer) is a ``chat`` span with ``error.type``.

The mapping is a fold: ``trace_step(state, record)`` returns the next state and whatever
spans ended with that record (children before their parents), so it serves a live export
fed record by record and an export of stored runs alike, and both give the same spans.

Ids are derived, not drawn: a span's id is a hash of its run and the position of the
record that opened it (0 for the header), a trace's the same for its root. Sending the
same recordings twice sends the same ids, which trace stores keep once.

Times are the records' own. The recordings say when a call ended, not when it began: a
call is taken to begin when the record before it was written (a ``started`` field, when a
record carries one, wins). In an interactive run nothing says when the person sent a task
(unless a ``task_start`` record does), so such a task and its first call begin when the
run or the previous task did; they carry ``seri.start_estimated`` and that call's duration
is left out of the duration metric.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal

import attrs

from seri.pure import events, history_events, tool_events
from seri.pure.genai_attributes import (
    AGENT_NAME,
    Content,
    Server,
    diagnostic,
    event_attributes,
    request_attributes,
    scalar_items,
    server_of,
    usage_attributes,
)
from seri.pure.genai_metrics import OPERATION_DURATION, TOKEN_USAGE, Observation
from seri.pure.otlp_model import (
    KIND_CLIENT,
    KIND_INTERNAL,
    NANOS,
    STATUS_ERROR,
    STATUS_UNSET,
    Attributes,
    AttrValue,
    Span,
    SpanEvent,
    nanos,
)
from seri.pure.redaction import Redactor
from seri.pure.run_tags import tag_attributes, tags_from_header
from seri.pure.usage_totals import UsageTotals

AgentRole = Literal["pending", "task", "standalone", "subagent"]

# Records that happen inside a tool's run: they leave the tool's span open (an MCP server's
# life is noticed on a call to it, and recorded before the call's result).
_INSIDE_TOOL = frozenset(
    {
        tool_events.Checkpoint.type,
        tool_events.Edit.type,
        tool_events.Check.type,
        tool_events.Denial.type,
        tool_events.SessionRule.type,
        tool_events.MemoryStaged.type,
        tool_events.SubagentStart.type,
        tool_events.McpServer.type,
        events.HookRun.type,
    }
)
# Records written while a model call is under way: they belong to the next call span.
_DURING_CALL = frozenset({events.Retry.type, events.OutputBudgetLowered.type})
# Records that are not the end of anything: the next call does not begin after them.
_NOT_A_STEP = _DURING_CALL | {events.ContextWindow.type}
# Records that belong to a task's work: arriving when none is open, they start one. Any
# other record (a type added later, say) becomes an event of whatever is open, or nothing.
_IN_TASK = frozenset(
    {
        history_events.Rule.type,
        tool_events.SessionRule.type,
        tool_events.MemoryStaged.type,
        tool_events.Checkpoint.type,
        tool_events.Edit.type,
        tool_events.Check.type,
        # A goal's check comes after its task ended: its failure is the next task's start.
        events.GoalCheck.type,
        events.GoalEnd.type,
    }
)
# Compaction triggers that come from a person between tasks, not from a task's own needs.
_ASKED_FOR = frozenset({"manual", "shell"})
_TASK_FAILED = frozenset({"error", "interrupted"})


@attrs.frozen
class TrajectoryRecord:
    """One line of ``seri trajectory export``: its type, session, run, time (epoch seconds),
    its own fields, and its position in its run (the header is 0)."""

    type: str
    session: str
    run: str
    at: float
    data: Mapping[str, Any]
    ordinal: int


@attrs.frozen
class RunContext:
    """What a run's header says, as far as its spans need it."""

    session: str
    run: str
    model: str = ""
    server: Server = attrs.Factory(Server)
    version: str = ""
    interactive: bool = False
    requests: Attributes = ()
    context_window: int | None = None
    # The run's tags (SERI_RUN_TAGS, --tag) as ``seri.tag.KEY`` attributes: on every span.
    tags: Attributes = ()


@attrs.frozen
class AgentScope:
    role: AgentRole
    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    start_ns: int
    last_ns: int
    conversation: str
    model: str
    estimated_start: bool = False
    events: tuple[SpanEvent, ...] = ()
    totals: UsageTotals = attrs.Factory(UsageTotals)
    status: str = ""
    turns: int | None = None
    error: str = ""
    compacted: bool = False
    # What the last turn call came to: "model_call" (answered), "overflow" (refused), or ""
    # (none since the last tool or compaction): a failed task ending now names its call.
    last_call: str = ""
    chats: int = 0


@attrs.frozen
class ToolScope:
    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    start_ns: int
    last_ns: int
    call_id: str
    name: str
    attributes: Attributes = ()
    events: tuple[SpanEvent, ...] = ()
    denied: bool = False
    message: str = ""  # why the call was not run


Scope = AgentScope | ToolScope


@attrs.frozen
class TraceState:
    content: Content = attrs.Factory(Content)
    run: RunContext | None = None
    stack: tuple[Scope, ...] = ()
    mark_ns: int = 0
    start_known: bool = False
    during_call: tuple[SpanEvent, ...] = ()


@attrs.frozen
class TraceOutput:
    spans: tuple[Span, ...] = ()
    observations: tuple[Observation, ...] = ()


def trace_step(state: TraceState, record: TrajectoryRecord) -> tuple[TraceState, TraceOutput]:
    """Take one record; return the next state and the spans (and metric observations)
    that ended with it."""
    step = _Step(state)
    step.take(record)
    return step.done()


def trace_end(state: TraceState) -> tuple[TraceState, TraceOutput]:
    """The end of the records: every span still open ends where its last record was."""
    step = _Step(state)
    step.close_run()
    return step.done()


def span_id_of(run: str, ordinal: int, role: str) -> bytes:
    return _digest("span", run, ordinal, role, 8)


def trace_id_of(run: str, ordinal: int) -> bytes:
    return _digest("trace", run, ordinal, "", 16)


def _digest(kind: str, run: str, ordinal: int, role: str, size: int) -> bytes:
    text = f"seri.{kind}\0{run}\0{ordinal}\0{role}".encode("utf-8", "replace")
    found = hashlib.sha256(text).digest()[:size]
    # An all-zero id means "no id" in OTLP; a hash landing there is astronomically rare.
    return found if any(found) else b"\x01" * size


class _Step:
    """One step of the fold. It works on copies and hands a new state back, so the state it
    was given is never changed."""

    def __init__(self, state: TraceState) -> None:
        self.content = state.content
        self.run = state.run
        self.stack: list[Scope] = list(state.stack)
        self.mark = state.mark_ns
        self.start_known = state.start_known
        self.during_call = list(state.during_call)
        self.spans: list[Span] = []
        self.observations: list[Observation] = []

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

    # -- dispatch ------------------------------------------------------------------------------

    def take(self, record: TrajectoryRecord) -> None:
        at = nanos(record.at) if math.isfinite(record.at) else self.mark
        if record.type == events.Header.type:
            self.close_run()
            self.run = _run_context(record, self.content.redactor)
            self.mark = nanos(_started(record))
            return
        if self.run is None or self.run.run != record.run:
            self.close_run()
            self.run = RunContext(record.session, record.run)
            self.mark = at
        handler = _HANDLERS.get(record.type)
        if handler is not None:
            handler(self, record, at)
        elif record.type in _DURING_CALL:
            self.during_call.append(self.event(record, at))
        elif record.type == "task_start":
            self.close_top_level_maintenance()
            self.start_known = True
        elif record.type in _IN_TASK or (self.stack and record.type != events.RunUsage.type):
            self.settle_tools(record)
            index = self.innermost_scope(record, at)
            self.add_event(index, self.event(record, at))
        if record.type not in _NOT_A_STEP:
            self.mark = max(self.mark, at)

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
        while self.stack and isinstance(self.stack[-1], ToolScope):
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
            events=_clamped(scope.events, scope.start_ns, end),
            status_code=code,
            status_message=message,
        )

    # -- model calls ---------------------------------------------------------------------------

    def chat(
        self,
        record: TrajectoryRecord,
        at: int,
        index: int,
        *,
        purpose: str,
        error_type: str = "",
        message: str = "",
        role: str = "chat",
    ) -> None:
        """A span for one model call that ended at ``at``, under the agent at ``index``."""
        scope = self.stack[index]
        assert isinstance(scope, AgentScope)
        run = self.current_run()
        data = record.data
        started = _seconds(data.get("started"))
        explicit = started is not None
        at = max(at, scope.start_ns)
        start = nanos(started) if started is not None else self.mark
        start = min(max(start, scope.start_ns), at)
        estimated = not explicit and scope.estimated_start and scope.chats == 0
        answered = record.type in (events.ModelCall.type, events.SummaryCall.type)
        usage = UsageTotals.of_record(data.get("usage")) if answered else UsageTotals(calls=1)
        reported = data.get("usage")
        served_by = reported.get("provider") if isinstance(reported, Mapping) else None
        model = scope.model
        response_model = _text(data.get("model"))
        finish = data.get("finish_reason")
        base: list[tuple[str, AttrValue]] = [
            ("gen_ai.operation.name", "chat"),
            *run.server.attributes(),
        ]
        if model:
            base.append(("gen_ai.request.model", model))
        if response_model:
            base.append(("gen_ai.response.model", response_model))
        attributes = [
            *base,
            *run.requests,
            ("gen_ai.conversation.id", scope.conversation),
            ("seri.purpose", purpose),
        ]
        attributes.extend(
            scalar_items(
                (
                    ("gen_ai.response.id", data.get("generation_id")),
                    ("gen_ai.response.finish_reasons", [finish] if finish else None),
                    ("seri.tool_calls", data.get("tool_calls")),
                    ("seri.usage.provider", served_by),
                )
            )
        )
        attributes.extend(usage_attributes(usage))
        attributes.extend(self.content.pairs(data, {"refusal": "seri.refusal"}))
        if finish == "incomplete" and not error_type:
            error_type = "incomplete"
        if error_type:
            attributes.append(("error.type", error_type))
        if estimated:
            attributes.append(("seri.start_estimated", True))
        span = Span(
            trace_id=scope.trace_id,
            span_id=span_id_of(run.run, record.ordinal, role),
            parent_span_id=scope.span_id,
            name=f"chat {model}" if model else "chat",
            kind=KIND_CLIENT,
            start_ns=start,
            end_ns=at,
            attributes=tuple(attributes),
            events=_clamped(tuple(self.during_call), start, at),
            status_code=STATUS_ERROR if error_type else STATUS_UNSET,
            status_message=message,
        )
        self.during_call.clear()
        self.emit(span)
        self.stack[index] = attrs.evolve(
            scope,
            totals=scope.totals.plus(usage),
            chats=scope.chats + 1,
            last_ns=max(scope.last_ns, at),
        )
        self.note_call(span, usage, base, error_type, estimated)

    def note_call(
        self,
        span: Span,
        usage: UsageTotals,
        base: list[tuple[str, AttrValue]],
        error_type: str,
        estimated: bool,
    ) -> None:
        """The call's metric observations: tokens (when reported) and duration."""
        if usage.reported:
            for kind, value in (("input", usage.input_tokens), ("output", usage.output_tokens)):
                self.observations.append(
                    Observation(
                        TOKEN_USAGE,
                        float(value),
                        (*base, ("gen_ai.token.type", kind)),
                        span.end_ns,
                        span.trace_id,
                    )
                )
        if not estimated:
            attributes = (*base, ("error.type", error_type)) if error_type else tuple(base)
            seconds = (span.end_ns - span.start_ns) / NANOS
            self.observations.append(
                Observation(OPERATION_DURATION, seconds, attributes, span.end_ns, span.trace_id)
            )

    # -- handlers ------------------------------------------------------------------------------

    def model_call(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        index = self.agent(record, at)
        self.chat(record, at, index, purpose="turn")
        self.set_last_call(index, "model_call")

    def summary_call(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        index = self.agent(record, at, maintenance=True)
        self.chat(record, at, index, purpose="summary")

    def overflow(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        purpose = record.data.get("purpose")
        summary = purpose == "summary"
        index = self.agent(record, at, maintenance=summary)
        message = diagnostic(self.content.redactor, record.data.get("error"))
        self.during_call.append(self.event(record, at))
        self.chat(
            record,
            at,
            index,
            purpose="summary" if summary else "turn",
            error_type="context_length_exceeded",
            message=message,
        )
        if not summary:
            self.set_last_call(index, "overflow")

    def set_last_call(self, index: int, what: str) -> None:
        scope = self.stack[index]
        if isinstance(scope, AgentScope):
            self.stack[index] = attrs.evolve(scope, last_call=what)

    def maintenance(self, record: TrajectoryRecord, at: int) -> None:
        """compaction and shrink: events on the agent; between tasks, a span of their own."""
        self.settle_tools(record)
        asked = _text(record.data.get("trigger")) in _ASKED_FOR
        index = self.agent(record, at, maintenance=asked)
        self.add_event(index, self.event(record, at))
        self.set_last_call(index, "")
        root = self.stack[0]
        if index == 0 and isinstance(root, AgentScope) and root.role in ("pending", "standalone"):
            role: AgentRole = "standalone" if asked else "task"
            compacted = root.compacted or record.type == history_events.Compaction.type
            self.stack[0] = attrs.evolve(root, role=role, compacted=compacted)

    def tool_call(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        index = self.agent(record, at)
        self.set_last_call(index, "")
        parent = self.stack[index]
        run = self.current_run()
        data = record.data
        name = _text(data.get("name"))
        call_id = _text(data.get("id"))
        self.stack.append(
            ToolScope(
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
        if not (isinstance(top, ToolScope) and top.call_id == data.get("id")):
            # A result without its call (a recording that starts mid-call): a span of its own.
            self.settle_tools(record)
            index = self.agent(record, at)
            self.tool_call(record, self.stack[index].last_ns)
            top = self.stack[-1]
        assert isinstance(top, ToolScope)
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

    def agent_index(self) -> int:
        return max(
            (i for i, scope in enumerate(self.stack) if isinstance(scope, AgentScope)), default=0
        )

    def denial(self, record: TrajectoryRecord, at: int) -> None:
        top = self.stack[-1] if self.stack else None
        if isinstance(top, ToolScope) and top.call_id == record.data.get("id"):
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

    def turn_end(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        index = self.agent(record, at)
        scope = self.stack[index]
        assert isinstance(scope, AgentScope)
        data = record.data
        status = _text(data.get("status")) or "error"
        error = diagnostic(self.content.redactor, data.get("error"))
        # A task that failed in a call the recording has no span for yet (refused before any
        # answer, or a second overflow): that call, ending here.
        unanswered = status in _TASK_FAILED and "error" in data
        failed_call = (unanswered and scope.last_call != events.ModelCall.type) or (
            status == "overflow" and scope.last_call == ""
        )
        if failed_call:
            self.chat(record, at, index, purpose="turn", error_type=status, message=error)
            scope = self.stack[index]
            assert isinstance(scope, AgentScope)
        turns = data.get("turns")
        self.stack[index] = attrs.evolve(
            scope,
            status=str(status),
            turns=turns if isinstance(turns, int) and not isinstance(turns, bool) else None,
            error=error,
            last_ns=max(scope.last_ns, at),
        )
        if scope.role != "subagent":
            self.close_scope(index, at)

    def model_switch(self, record: TrajectoryRecord, at: int) -> None:
        model = record.data.get("model")
        if isinstance(model, str) and model and self.run is not None:
            self.run = attrs.evolve(self.run, model=model)
        if self.stack:
            index = self.agent_index()
            self.add_event(index, self.event(record, at))
            scope = self.stack[index]
            if isinstance(scope, AgentScope) and isinstance(model, str) and model:
                self.stack[index] = attrs.evolve(scope, model=model)

    def context_window(self, record: TrajectoryRecord, at: int) -> None:
        tokens = record.data.get("tokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool) and self.run is not None:
            self.run = attrs.evolve(self.run, context_window=tokens)


_HANDLERS = {
    events.ModelCall.type: _Step.model_call,
    events.SummaryCall.type: _Step.summary_call,
    events.Overflow.type: _Step.overflow,
    history_events.Compaction.type: _Step.maintenance,
    history_events.Shrink.type: _Step.maintenance,
    tool_events.ToolCall.type: _Step.tool_call,
    tool_events.ToolResult.type: _Step.tool_result,
    tool_events.Denial.type: _Step.denial,
    tool_events.SubagentStart.type: _Step.subagent_start,
    tool_events.SubagentEnd.type: _Step.subagent_end,
    events.TurnEnd.type: _Step.turn_end,
    events.ModelSwitch.type: _Step.model_switch,
    events.ContextWindow.type: _Step.context_window,
}


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


def tool_span(scope: ToolScope, end: int) -> Span:
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
        events=_clamped(scope.events, scope.start_ns, end),
        status_code=STATUS_ERROR if error_type else STATUS_UNSET,
        status_message=scope.message,
    )


def _clamped(events: tuple[SpanEvent, ...], start: int, end: int) -> tuple[SpanEvent, ...]:
    """Events inside their span's time, whatever the clock did between records."""
    return tuple(
        attrs.evolve(event, time_ns=min(max(event.time_ns, start), end))
        if not start <= event.time_ns <= end
        else event
        for event in events
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# Beyond the year 9999 a number is not a time (and in nanoseconds would overflow a float).
_LAST_SECOND = 253_402_300_799


def _seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value) if abs(value) <= _LAST_SECOND else None
    return None


def _started(record: TrajectoryRecord) -> float:
    started = _seconds(record.data.get("started"))
    return record.at if started is None else started


def _run_context(header: TrajectoryRecord, redactor: Redactor) -> RunContext:
    data = header.data
    # Redacted as the recorder redacts the stored header, so a live export and a later one
    # from the store agree.
    tags = tuple((key, redactor.text(value)) for key, value in tags_from_header(data.get("tags")))
    model = data.get("model")
    version = data.get("seri_version")
    window = data.get("context_window")
    return RunContext(
        session=header.session,
        run=header.run,
        model=_text(model),
        server=server_of(data.get("base_url")),
        version=_text(version),
        interactive=data.get("interactive") is True,
        requests=request_attributes(data),
        context_window=window if isinstance(window, int) and not isinstance(window, bool) else None,
        tags=tag_attributes(tags),
    )


@attrs.frozen
class FinishedTrace:
    """One task's trace, complete: its spans (the root last) and its metric observations."""

    spans: tuple[Span, ...]
    observations: tuple[Observation, ...]

    @property
    def root(self) -> Span:
        return self.spans[-1]


def finished_traces(
    records: Iterable[TrajectoryRecord], content: Content, since_ns: int | None = None
) -> Iterator[FinishedTrace]:
    """The traces of ``records``, each once its root has ended; with ``since_ns``, only
    those whose root ended at or after it (a task is sent whole or not at all)."""
    state = TraceState(content)
    open_spans: dict[bytes, list[Span]] = {}
    open_observations: dict[bytes, list[Observation]] = {}

    def settled(output: TraceOutput) -> Iterator[FinishedTrace]:
        for seen in output.observations:
            open_observations.setdefault(seen.trace_id, []).append(seen)
        for span in output.spans:
            spans = open_spans.setdefault(span.trace_id, [])
            spans.append(span)
            if span.parent_span_id:
                continue
            del open_spans[span.trace_id]
            observations = tuple(open_observations.pop(span.trace_id, ()))
            if since_ns is None or span.end_ns >= since_ns:
                yield FinishedTrace(tuple(spans), observations)

    for record in records:
        state, output = trace_step(state, record)
        yield from settled(output)
    state, output = trace_end(state)
    yield from settled(output)
