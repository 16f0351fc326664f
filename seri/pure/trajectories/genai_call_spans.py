"""The spans of model calls in the GenAI trace fold: one ``chat`` span per call.

A model call, a summarizer call, or a call the provider refused as too long becomes a
``chat {model}`` span (CLIENT) under its agent, with the events written while it was under
way, its usage, and the metric observations of its tokens and duration.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.trajectories import events
from seri.pure.trajectories.genai_attributes import diagnostic, scalar_items, usage_attributes
from seri.pure.trajectories.genai_metrics import OPERATION_DURATION, TOKEN_USAGE, MetricObservation
from seri.pure.trajectories.genai_scope_stack import ScopeStack, clamped
from seri.pure.trajectories.genai_scopes import (
    AgentScope,
    TrajectoryRecord,
    data_seconds,
    data_text,
    span_id_of,
)
from seri.pure.trajectories.otlp_model import (
    KIND_CLIENT,
    NANOS,
    STATUS_ERROR,
    STATUS_UNSET,
    AttrValue,
    Span,
    nanos,
)


class CallSpans(ScopeStack):
    """The fold's handlers of model calls, and the ``chat`` span they share with a task that
    failed in a call the recording has no span for."""

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
        started = data_seconds(data.get("started"))
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
        response_model = data_text(data.get("model"))
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
            events=clamped(tuple(self.during_call), start, at),
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
                    MetricObservation(
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
                MetricObservation(
                    OPERATION_DURATION, seconds, attributes, span.end_ns, span.trace_id
                )
            )

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
