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

The fold's records and scopes are in ``genai_scopes``, its scope stack in
``genai_scope_stack``, the spans of model calls in ``genai_call_spans`` and of tools and
subagents in ``genai_tool_spans``; here is the dispatch of each record.

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

import math
from collections.abc import Iterable, Iterator

import attrs

from seri.pure.session.run_tags import tag_attributes, tags_from_header
from seri.pure.trajectories import events, history_events, tool_events
from seri.pure.trajectories.genai_attributes import (
    Content,
    diagnostic,
    request_attributes,
    server_of,
)
from seri.pure.trajectories.genai_call_spans import CallSpans
from seri.pure.trajectories.genai_metrics import MetricObservation
from seri.pure.trajectories.genai_scopes import (
    AgentRole,
    AgentScope,
    RunContext,
    TraceOutput,
    TraceState,
    TrajectoryRecord,
    data_seconds,
    data_text,
)
from seri.pure.trajectories.genai_tool_spans import ToolSpans
from seri.pure.trajectories.otlp_model import Span, nanos
from seri.pure.trajectories.redaction import Redactor

# Records written while a model call is under way: they belong to the next call span.
_DURING_CALL = frozenset({events.RetryEvent.type, events.OutputBudgetLowered.type})
# Records that are not the end of anything: the next call does not begin after them.
_NOT_A_STEP = _DURING_CALL | {events.ContextWindow.type}
# Records that belong to a task's work: arriving when none is open, they start one. Any
# other record (a type added later, say) becomes an event of whatever is open, or nothing.
_IN_TASK = frozenset(
    {
        history_events.RuleEvent.type,
        tool_events.SessionRuleEvent.type,
        tool_events.MemoryStaged.type,
        tool_events.CheckpointEvent.type,
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


class _Step(CallSpans, ToolSpans):
    """One step of the fold: the dispatch of a record to its handler, and the handlers of
    what ends a task or changes its run."""

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

    def maintenance(self, record: TrajectoryRecord, at: int) -> None:
        """compaction and shrink: events on the agent; between tasks, a span of their own."""
        self.settle_tools(record)
        asked = data_text(record.data.get("trigger")) in _ASKED_FOR
        index = self.agent(record, at, maintenance=asked)
        self.add_event(index, self.event(record, at))
        self.set_last_call(index, "")
        root = self.stack[0]
        if index == 0 and isinstance(root, AgentScope) and root.role in ("pending", "standalone"):
            role: AgentRole = "standalone" if asked else "task"
            compacted = root.compacted or record.type == history_events.Compaction.type
            self.stack[0] = attrs.evolve(root, role=role, compacted=compacted)

    def turn_end(self, record: TrajectoryRecord, at: int) -> None:
        self.settle_tools(record)
        index = self.agent(record, at)
        scope = self.stack[index]
        assert isinstance(scope, AgentScope)
        data = record.data
        status = data_text(data.get("status")) or "error"
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
    tool_events.ToolCallEvent.type: _Step.tool_call,
    tool_events.ToolResult.type: _Step.tool_result,
    tool_events.Denial.type: _Step.denial,
    tool_events.SubagentStart.type: _Step.subagent_start,
    tool_events.SubagentEnd.type: _Step.subagent_end,
    events.TurnEnd.type: _Step.turn_end,
    events.ModelSwitch.type: _Step.model_switch,
    events.ContextWindow.type: _Step.context_window,
}


def _started(record: TrajectoryRecord) -> float:
    started = data_seconds(record.data.get("started"))
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
        model=data_text(model),
        server=server_of(data.get("base_url")),
        version=data_text(version),
        interactive=data.get("interactive") is True,
        requests=request_attributes(data),
        context_window=window if isinstance(window, int) and not isinstance(window, bool) else None,
        tags=tag_attributes(tags),
    )


@attrs.frozen
class FinishedTrace:
    """One task's trace, complete: its spans (the root last) and its metric observations."""

    spans: tuple[Span, ...]
    observations: tuple[MetricObservation, ...]

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
    open_observations: dict[bytes, list[MetricObservation]] = {}

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
