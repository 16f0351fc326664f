"""seri's recordings as ATIF, the Agent Trajectory Interchange Format (Harbor RFC 0001, v1.8).

One document per run (one invocation of seri on a session): ``session_id`` is seri's
session, ``trajectory_id`` the run, and the runs of a session chain through
``continued_trajectory_ref``. The run's recorded events are the skeleton and the session's
stored messages give the words:

- every ``model_call`` is an ``agent`` step with its metrics (tokens, cached tokens, cost);
  the assistant message stored right after it gives the step its text, reasoning and tool
  calls; a message that is no longer stored (a compaction evicted it, a rewind removed it)
  leaves the step with what the recording kept (the calls, results cut to 2 KB);
- tool results and denials are the ``observation`` of the step that made the call, with
  the details seri recorded (edits, checks, checkpoints, approvals) in the result's
  ``extra``; the stored tool message, when there is one, is the result's content;
- a person's message is a ``user`` step; a recap, a fired rule, a compaction, a shrink,
  an overflow, a retry, a lowered output budget and a model switch are ``system`` steps;
- a subagent is embedded in ``subagent_trajectories`` (``trajectory_id`` = its session)
  and named by the ``task`` call's result (``subagent_trajectory_ref``);
- ``final_metrics`` counts every billed call: the run's own, its summarizer calls and its
  subagents' (ATIF's ``total_*`` are meant as sums over steps; summarizer calls have no
  step of their own, which ``notes`` says when there were any).

Messages a session holds from before its first recorded run (an imported session, or one
recorded with recording off) form one more document, ``trajectory_id`` = the session id,
without metrics. Nothing here reads anything: the caller hands in what was stored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from seri.pure import events as event_records
from seri.pure import history_events, json_text, tool_events
from seri.pure.records import Message
from seri.pure.timestamps import iso_utc

SCHEMA_VERSION = "ATIF-v1.8"
AGENT_NAME = "seri"
# The result text of the `task` tool starts with this, naming the child session.
_SUBAGENT_RESULT = re.compile(r"\[subagent ([0-9A-Za-z_-]+)\]")
# Events whose facts belong to the tool call that was running when they were recorded.
_CALL_DETAILS = frozenset(
    {
        tool_events.Edit.type,
        tool_events.Check.type,
        tool_events.Checkpoint.type,
        tool_events.MemoryStaged.type,
    }
)
# Events that become no step: they are summed, or kept in the document's extra.
_FOLDED = frozenset(
    {
        event_records.SummaryCall.type,
        event_records.ContextWindow.type,
        event_records.TurnEnd.type,
        event_records.RunUsage.type,
    }
)


@attrs.frozen
class RecordedEvent:
    """One stored event: its type, time and JSON body as the recorder wrote it."""

    type: str
    at: float
    body: str


@attrs.frozen
class StoredMessage:
    seq: int
    created: float
    message: Message


@attrs.frozen
class SessionMessages:
    """A subagent session's stored messages."""

    session_id: str
    messages: tuple[StoredMessage, ...]


@attrs.frozen
class RunRecording:
    """One run: its header and events, the session's messages stored while it ran, and the
    messages of the subagent sessions it started."""

    session_id: str
    run_id: str
    started: float
    header: str
    events: tuple[RecordedEvent, ...]
    messages: tuple[StoredMessage, ...]
    subagents: tuple[SessionMessages, ...] = ()
    # The trajectory id of the session's next document ('' for the last).
    continued_by: str = ""


@attrs.frozen
class UnrecordedMessages:
    """A session's messages from before its first recorded run (or of a session never
    recorded): an imported session, or one written with recording off."""

    session_id: str
    model: str
    project: str
    imported: bool
    messages: tuple[StoredMessage, ...]
    subagents: tuple[SessionMessages, ...] = ()
    continued_by: str = ""


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json_text.loads_stored(text)
    except ValueError:
        return {"body": text}
    return value if isinstance(value, dict) else {"body": value}


def _stamp(seconds: float) -> str | None:
    try:
        return iso_utc(seconds) if math.isfinite(seconds) else None
    except (OverflowError, OSError, ValueError):
        return None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _count(value: Any) -> int:
    number = _number(value)
    return int(number) if number is not None else 0


def subagents_started(events: Iterable[RecordedEvent]) -> tuple[str, ...]:
    """The child sessions a run's events name (the caller loads their messages)."""
    found = []
    for event in events:
        if event.type == tool_events.SubagentStart.type:
            child = _json_object(event.body).get("child")
            if isinstance(child, str) and child not in found:
                found.append(child)
    return tuple(found)


def _split_spans(
    events: Sequence[RecordedEvent],
) -> tuple[list[RecordedEvent], dict[str, list[RecordedEvent]]]:
    """The run's own events (with the subagent markers) and each subagent's events.

    A subagent runs inside its parent's tool call and records into the parent's run,
    between its ``subagent_start`` and ``subagent_end``; deeper ones stay in their
    parent's list, to be split again when that child is built.
    """
    own: list[RecordedEvent] = []
    spans: dict[str, list[RecordedEvent]] = {}
    inside = ""
    depth = 0
    for event in events:
        if inside:
            child = _json_object(event.body).get("child")
            if event.type == tool_events.SubagentStart.type:
                depth += 1
            elif event.type == tool_events.SubagentEnd.type and (depth == 0 or child == inside):
                if depth == 0:
                    own.append(event)
                    inside = ""
                    continue
                depth -= 1
            spans[inside].append(event)
            continue
        own.append(event)
        if event.type == tool_events.SubagentStart.type:
            child = _json_object(event.body).get("child")
            if isinstance(child, str):
                inside = child
                spans.setdefault(child, [])
    return own, spans


def _usage_metrics(usage: Any) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """ATIF metrics of one call's recorded usage, and what ATIF has no field for."""
    if not isinstance(usage, dict) or usage.get("reported") is False:
        return None, {"usage_reported": False}
    metrics: dict[str, Any] = {
        "prompt_tokens": _count(usage.get("input_tokens")),
        "completion_tokens": _count(usage.get("output_tokens")),
        "cached_tokens": _count(usage.get("cached_tokens")),
    }
    cost = _number(usage.get("cost"))
    if cost is not None:
        metrics["cost_usd"] = cost
    extra = {
        key: usage[key]
        for key in ("reasoning_tokens", "cache_write_tokens", "upstream_cost", "provider")
        if usage.get(key) not in (None, "", 0)
    }
    if extra:
        metrics["extra"] = extra
    return metrics, {}


@attrs.define
class _Totals:
    prompt: int = 0
    completion: int = 0
    cached: int = 0
    cost: float = 0.0
    costed: int = 0
    calls: int = 0
    unreported: int = 0

    def add(self, usage: Any) -> None:
        self.calls += 1
        metrics, _ = _usage_metrics(usage)
        if metrics is None:
            self.unreported += 1
            return
        self.prompt += metrics["prompt_tokens"]
        self.completion += metrics["completion_tokens"]
        self.cached += metrics["cached_tokens"]
        if "cost_usd" in metrics:
            self.cost += metrics["cost_usd"]
            self.costed += 1

    def absorb(self, final: Mapping[str, Any]) -> None:
        """A subagent's final metrics, which count for the parent too."""
        self.prompt += final.get("total_prompt_tokens") or 0
        self.completion += final.get("total_completion_tokens") or 0
        self.cached += final.get("total_cached_tokens") or 0
        extra = final.get("extra") or {}
        self.calls += extra.get("calls", 0)
        self.unreported += extra.get("calls_without_usage", 0)
        if final.get("total_cost_usd") is not None:
            self.cost += final["total_cost_usd"]
            self.costed += extra.get("calls_with_cost", 0)


@attrs.define
class _Step:
    source: str
    timestamp: str | None
    message: str = ""
    reasoning: str = ""
    model_name: str | None = None
    calls: list[dict[str, Any]] = attrs.Factory(list)
    results: dict[str, dict[str, Any]] = attrs.Factory(dict)
    loose_results: list[dict[str, Any]] = attrs.Factory(list)
    metrics: dict[str, Any] | None = None
    llm_calls: int | None = None
    extra: dict[str, Any] = attrs.Factory(dict)
    # An agent step made from a model_call whose message has not been seen yet.
    awaiting_message: bool = False

    def result(self, call_id: str) -> dict[str, Any]:
        return self.results.setdefault(call_id, {"source_call_id": call_id})

    def as_dict(self, step_id: int, reasoning_effort: Any) -> dict[str, Any]:
        step: dict[str, Any] = {"step_id": step_id}
        if self.timestamp:
            step["timestamp"] = self.timestamp
        step["source"] = self.source
        if self.source == "agent":
            if self.model_name:
                step["model_name"] = self.model_name
            if reasoning_effort not in (None, ""):
                step["reasoning_effort"] = reasoning_effort
        step["message"] = self.message
        if self.source == "agent":
            if self.reasoning:
                step["reasoning_content"] = self.reasoning
            if self.calls:
                step["tool_calls"] = self.calls
        answered = [c["tool_call_id"] for c in self.calls if c["tool_call_id"] in self.results]
        results = [_in_order(self.results[call_id]) for call_id in answered]
        results += self.loose_results
        if results:
            step["observation"] = {"results": results}
        if self.source == "agent":
            if self.metrics is not None:
                step["metrics"] = self.metrics
            if self.llm_calls is not None:
                step["llm_call_count"] = self.llm_calls
        if self.extra:
            step["extra"] = self.extra
        return step


def _in_order(result: dict[str, Any]) -> dict[str, Any]:
    """An observation result with its keys in the schema's order (content before extra)."""
    keys = ("source_call_id", "content", "subagent_trajectory_ref", "extra")
    return {key: result[key] for key in keys if key in result}


def _tool_call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """ATIF wants an object; seri keeps the text the model sent, JSON or not."""
    call: dict[str, Any] = {"tool_call_id": call_id, "function_name": name, "arguments": {}}
    if isinstance(arguments, str):
        try:
            parsed = json_text.loads(arguments)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            call["arguments"] = parsed
        else:
            call["extra"] = {"raw_arguments": arguments}
    elif arguments is not None:
        # The recording keeps at most 2 KB of a value: {"elided": true, "originalBytes": N}.
        call["extra"] = {"arguments_not_kept": arguments}
    return call


def _text_of(value: Any) -> tuple[str, dict[str, Any]]:
    """A recorded text, or a note that the recording kept only its size."""
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict) and value.get("elided"):
        return f"[{value.get('originalBytes', '?')} bytes, not kept in the recording]", {
            "elided": value
        }
    return "", {}


def _system_message(kind: str, body: Mapping[str, Any]) -> str:
    """A short line for a system step (its details are in the step's extra)."""
    if kind == history_events.Compaction.type:
        return (
            f"compaction ({body.get('trigger', '?')}): {body.get('evicted', '?')} messages "
            f"replaced by a recap, estimate {body.get('estimate_before', '?')} -> "
            f"{body.get('estimate_after', '?')} tokens"
        )
    if kind == history_events.Shrink.type:
        return f"shrink ({body.get('trigger', '?')}): {body.get('elided', '?')} payloads elided"
    if kind == event_records.Overflow.type:
        return f"the provider refused the request as too long: {body.get('error', '')}"
    if kind == event_records.Retry.type:
        status = body.get("status") or "connection failure"
        return (
            f"retry {body.get('attempt', '?')} after {status}, in {body.get('delay', '?')} s: "
            f"{body.get('reason', '')}"
        )
    if kind == event_records.OutputBudgetLowered.type:
        key = body.get("key", "max_tokens")
        return f"{key} lowered to {body.get('to', '?')}: {body.get('why', '')}"
    if kind == event_records.ModelSwitch.type:
        return f"model switched to {body.get('model', '?')}"
    if kind == history_events.Rule.type:
        return f"rule {body.get('name', '?')} fired"
    if kind == event_records.HookRun.type:
        return (
            f"hook {body.get('event', '?')} ({body.get('source', '?')}): "
            f"{body.get('decision', '?')}, exit {body.get('exit_code')}"
        )
    if kind == tool_events.McpServer.type:
        ready = (
            f"MCP server {body.get('server', '?')!r} is ready, with {body.get('tools', 0)} tool(s)"
        )
        return str(body.get("detail") or ready)
    return kind.replace("_", " ")


class _Builder:
    """Builds one document's steps from its timeline of events and messages."""

    def __init__(
        self,
        subagents: Mapping[str, SessionMessages],
        spans: Mapping[str, list[RecordedEvent]],
        context: _Context,
    ) -> None:
        self.steps: list[_Step] = []
        self.current: _Step | None = None
        self.call_steps: dict[str, _Step] = {}
        self.running_call = ""
        self.totals = _Totals()
        self.summarizer = _Totals()
        self.summary_calls = 0
        self.tasks: list[dict[str, Any]] = []
        self.extra: dict[str, Any] = {}
        self.unmatched_calls = 0
        self.subagents = subagents
        self.spans = spans
        self.context = context
        self.children: list[dict[str, Any]] = []
        # Subagents without a step of their own, whose calls were counted here instead.
        self.unshown: set[str] = set()
        self.embedded: set[str] = set()
        # The announcement of the compaction under way (compaction_start): a fact of its step.
        self.compaction_announced: dict[str, Any] | None = None

    # -- the timeline --------------------------------------------------------------------

    def feed(self, events: Sequence[RecordedEvent], messages: Sequence[StoredMessage]) -> None:
        timeline: list[tuple[float, int, int, Any]] = [
            (event.at, 0, index, event) for index, event in enumerate(events)
        ]
        timeline += [(m.created, 1, m.seq, m) for m in messages]
        timeline.sort(key=lambda item: item[:3])
        for _, _, _, item in timeline:
            if isinstance(item, RecordedEvent):
                self._event(item.type, item.at, _json_object(item.body))
            else:
                self._message(item)
        self._close_agent_step()

    def _new(self, source: str, timestamp: str | None, **fields: Any) -> _Step:
        step = _Step(source, timestamp, **fields)
        self.steps.append(step)
        return step

    def _close_agent_step(self) -> None:
        if self.current is not None and self.current.awaiting_message:
            self.current.awaiting_message = False
            self.current.extra["message_stored"] = False
            self.unmatched_calls += 1

    # -- messages ------------------------------------------------------------------------

    def _message(self, stored: StoredMessage) -> None:
        message = stored.message
        when = _stamp(stored.created)
        if message.role == "assistant":
            self._assistant(message, when)
            return
        if message.role == "tool":
            self._tool_message(message, when)
            return
        self._close_agent_step()
        self.current = None
        if message.role == "user" and not message.kind:
            self._new("user", when, message=message.text)
        else:
            extra = {"role": message.role, **({"kind": message.kind} if message.kind else {})}
            self._new("system", when, message=message.text, extra=extra)

    def _assistant(self, message: Message, when: str | None) -> None:
        step = self.current
        if step is None or not step.awaiting_message:
            self._close_agent_step()
            step = self._new("agent", when)
            self.current = step
        step.awaiting_message = False
        step.message = message.text
        step.reasoning = message.reasoning
        if message.kind:
            step.extra["kind"] = message.kind
        for call in message.tool_calls:
            self._add_call(step, call.id, call.name, call.arguments)

    def _add_call(self, step: _Step, call_id: str, name: str, arguments: Any) -> None:
        if all(c["tool_call_id"] != call_id for c in step.calls):
            step.calls.append(_tool_call(call_id, name, arguments))
        self.call_steps[call_id] = step

    def _tool_message(self, message: Message, when: str | None) -> None:
        step = self.call_steps.get(message.tool_call_id)
        extra: dict[str, Any] = {}
        if message.is_error:
            extra["is_error"] = True
        if message.kind:
            extra["kind"] = message.kind
        if step is None:
            # A call made in an earlier document (a result seri supplied on resume).
            self._close_agent_step()
            self.current = None
            loose = {
                "content": message.text,
                "extra": {
                    "tool_call_id": message.tool_call_id,
                    "tool_name": message.tool_name,
                    **extra,
                },
            }
            self._new(
                "system",
                when,
                message=f"result of {message.tool_name} {message.tool_call_id}",
                loose_results=[loose],
            )
            return
        result = step.result(message.tool_call_id)
        result["content"] = message.text
        if extra:
            result.setdefault("extra", {}).update(extra)
        child = _SUBAGENT_RESULT.match(message.text)
        if message.tool_name == "task" and child and "subagent_trajectory_ref" not in result:
            self._embed(result, child.group(1))

    # -- events --------------------------------------------------------------------------

    def _event(self, kind: str, at: float, body: dict[str, Any]) -> None:
        when = _stamp(at)
        if kind == event_records.ModelCall.type:
            self._model_call(body, when)
        elif kind == tool_events.ToolCall.type:
            self._tool_call_event(body, when)
        elif kind in (tool_events.ToolResult.type, tool_events.Denial.type):
            self._tool_result_event(kind, body)
        elif kind == tool_events.SessionRule.type:
            step = self.call_steps.get(str(body.get("id")))
            if step is not None:
                step.result(str(body.get("id"))).setdefault("extra", {})["approved_always"] = (
                    body.get("rules")
                )
        elif kind in _CALL_DETAILS:
            step = self.call_steps.get(self.running_call)
            if step is not None:
                step.result(self.running_call).setdefault("extra", {})[kind] = body
        elif kind == event_records.HookRun.type and self.running_call in self.call_steps:
            # A PreToolUse or PostToolUse hook: a fact of the call it ran for.
            step = self.call_steps[self.running_call]
            facts = step.result(self.running_call).setdefault("extra", {})
            facts.setdefault(kind, []).append(body)
        elif kind == tool_events.McpServer.type and self.running_call in self.call_steps:
            # Noticed on a call to the server (it died on it, say): that call's facts.
            step = self.call_steps[self.running_call]
            facts = step.result(self.running_call).setdefault("extra", {})
            facts.setdefault(kind, []).append(body)
        elif kind == tool_events.SubagentStart.type:
            self._subagent_start(body)
        elif kind == tool_events.SubagentEnd.type:
            self._subagent_end(body)
        elif kind in _FOLDED:
            self._folded(kind, body)
        elif kind == history_events.CompactionStart.type:
            self.compaction_announced = {"timestamp": when, **body}
        else:
            self._close_agent_step()
            self.current = None
            extra: dict[str, Any] = {"event": kind, **body}
            if kind == history_events.Compaction.type and self.summary_calls:
                extra["summarizer"] = self._summarizer_so_far()
            if kind == history_events.Compaction.type and self.compaction_announced:
                extra["announced"], self.compaction_announced = self.compaction_announced, None
            self._new("system", when, message=_system_message(kind, body), extra=extra)

    def _model_call(self, body: dict[str, Any], when: str | None) -> None:
        self._close_agent_step()
        usage = body.get("usage")
        self.totals.add(usage)
        metrics, extra = _usage_metrics(usage)
        for key in ("finish_reason", "generation_id", "refusal"):
            if body.get(key) not in (None, ""):
                extra[key] = body[key]
        model = body.get("model")
        self.current = self._new(
            "agent",
            when,
            model_name=model if isinstance(model, str) and model else None,
            metrics=metrics,
            llm_calls=1,
            extra=extra,
            awaiting_message=True,
        )

    def _tool_call_event(self, body: dict[str, Any], when: str | None) -> None:
        call_id = str(body.get("id", ""))
        self.running_call = call_id
        step = self.current
        if step is None or step.source != "agent":
            step = self._new("agent", when, extra={"message_stored": False})
            self.current = step
        if step.awaiting_message:
            # The assistant message is gone: the recording is all that is left of it.
            self._close_agent_step()
        self._add_call(step, call_id, str(body.get("name", "")), body.get("arguments"))

    def _tool_result_event(self, kind: str, body: dict[str, Any]) -> None:
        call_id = str(body.get("id", ""))
        step = self.call_steps.get(call_id)
        if step is None:
            # Its call is not in this document (nor in the recording): kept as a loose result.
            self._close_agent_step()
            self.current = None
            result: dict[str, Any] = {"extra": {"tool_call_id": call_id}}
            step = self._new("system", None, message=f"result of tool call {call_id}")
            step.loose_results.append(result)
        else:
            result = step.result(call_id)
        extra = result.setdefault("extra", {})
        if kind == tool_events.Denial.type:
            extra["denial"] = {k: body[k] for k in ("rule", "reason", "by") if k in body}
            result.setdefault("content", f"denied: {body.get('reason', '')}")
            return
        for key in ("ok", "interrupted", "bytes", "error"):
            if key in body:
                extra[key] = body[key]
        text, notes = _text_of(body.get("text", body.get("error")))
        extra.update(notes)
        if "content" not in result:
            result["content"] = text

    def _subagent_start(self, body: dict[str, Any]) -> None:
        child = body.get("child")
        if not isinstance(child, str):
            return
        step = self.call_steps.get(self.running_call)
        if step is not None:
            result = step.result(self.running_call)
        else:
            # The call that started it is not recorded: the subagent is named by a step alone.
            result = {"extra": {"subagent_session": child}}
            holder = _Step("system", None, message=f"subagent {child}", loose_results=[result])
            self._close_agent_step()
            self.current = None
            self._embed(result, child)
            if "subagent_trajectory_ref" in result:
                self.steps.append(holder)
            return
        self._embed(result, child)
        if body.get("description"):
            result.setdefault("extra", {})["subagent_description"] = body["description"]

    def _subagent_end(self, body: dict[str, Any]) -> None:
        step = self.call_steps.get(self.running_call)
        if step is not None:
            ended = {k: body[k] for k in ("child", "status", "turns") if k in body}
            step.result(self.running_call).setdefault("extra", {})["subagent"] = ended

    def _embed(self, result: dict[str, Any], child_id: str) -> None:
        # A result inside a subagent that names that subagent or a run enclosing it (a tool's
        # text can say "[subagent child0]") is words, not a run to embed: embedding it again
        # would never end.
        if self.context.encloses(child_id):
            return
        if child_id not in self.embedded:
            messages = self.subagents.get(child_id)
            document = _document(
                self.context.for_child(child_id),
                tuple(self.spans.get(child_id, ())),
                messages.messages if messages else (),
                self.subagents,
            )
            if document is None:
                self._count_unshown(child_id)
                return
            self.embedded.add(child_id)
            self.children.append(document)
            final = document.get("final_metrics")
            if final:
                self.totals.absorb(final)
        result["subagent_trajectory_ref"] = [
            {"trajectory_id": child_id, "session_id": self.context.session_id}
        ]

    def _count_unshown(self, child_id: str) -> None:
        """A subagent with no step to show is not embedded; the calls billed inside its span
        (a summarizer's, say) still count in this run's totals, once."""
        if child_id in self.unshown:
            return
        self.unshown.add(child_id)
        for event in self.spans.get(child_id, ()):
            if event.type in (event_records.ModelCall.type, event_records.SummaryCall.type):
                self.totals.add(_json_object(event.body).get("usage"))

    def _folded(self, kind: str, body: dict[str, Any]) -> None:
        if kind == event_records.SummaryCall.type:
            self.summary_calls += 1
            self.totals.add(body.get("usage"))
            self.summarizer.add(body.get("usage"))
        elif kind == event_records.TurnEnd.type:
            self.tasks.append(body)
        else:
            self.extra[kind] = body

    def _summarizer_so_far(self) -> dict[str, Any]:
        used = self.summarizer
        self.summarizer = _Totals()
        summary: dict[str, Any] = {
            "calls": used.calls,
            "prompt_tokens": used.prompt,
            "completion_tokens": used.completion,
        }
        if used.costed:
            summary["cost_usd"] = used.cost
        return summary

    # -- the end -------------------------------------------------------------------------

    def final_metrics(self) -> dict[str, Any]:
        totals = self.totals
        if not totals.calls and not self.tasks:
            # Nothing was recorded: no count of tokens is known (which is not zero tokens).
            return {"total_steps": len(self.steps)}
        final: dict[str, Any] = {
            "total_prompt_tokens": totals.prompt,
            "total_completion_tokens": totals.completion,
            "total_cached_tokens": totals.cached,
        }
        if totals.costed:
            final["total_cost_usd"] = totals.cost
        final["total_steps"] = len(self.steps)
        extra: dict[str, Any] = {
            "calls": totals.calls,
            "calls_with_cost": totals.costed,
            "calls_without_usage": totals.unreported,
            "summary_calls": self.summary_calls,
        }
        if self.tasks:
            extra["status"] = self.tasks[-1].get("status")
            extra["tasks"] = self.tasks
        elif totals.calls:
            extra["status"] = "unfinished"  # the run ended before its task did (killed)
        if event_records.RunUsage.type in self.extra:
            extra["run_usage"] = self.extra["run_usage"]
        final["extra"] = extra
        return final

    def notes(self) -> str | None:
        said = []
        if self.unmatched_calls:
            said.append(
                f"{self.unmatched_calls} agent steps have no stored message (a compaction "
                "evicted it or a rewind removed it): they carry the recorded tool calls, results "
                "(cut to 2 KB) and metrics"
            )
        if self.summary_calls:
            said.append(
                f"final_metrics includes {self.summary_calls} compaction summarizer calls, "
                "which have no step of their own (see the compaction steps' extra.summarizer)"
            )
        if self.children:
            said.append("final_metrics includes the embedded subagents' calls")
        return "; ".join(said) + "." if said else None


@attrs.frozen
class _Context:
    """What every document of one export shares: who ran, as what."""

    session_id: str
    trajectory_id: str
    agent: dict[str, Any]
    reasoning_effort: Any
    extra: dict[str, Any]
    continued_by: str = ""
    # The trajectories this document is embedded in, outermost first.
    enclosing: tuple[str, ...] = ()

    def for_child(self, child_id: str) -> _Context:
        return _Context(
            self.session_id,
            child_id,
            self.agent,
            self.reasoning_effort,
            {"seri_session": child_id, "subagent_of": self.extra.get("seri_session")},
            enclosing=(*self.enclosing, self.trajectory_id),
        )

    def encloses(self, trajectory_id: str) -> bool:
        """Whether ``trajectory_id`` is this document or one it is embedded in."""
        return trajectory_id == self.trajectory_id or trajectory_id in self.enclosing


def _document(
    context: _Context,
    events: Sequence[RecordedEvent],
    messages: Sequence[StoredMessage],
    subagents: Mapping[str, SessionMessages],
) -> dict[str, Any] | None:
    own, spans = _split_spans(events)
    builder = _Builder(subagents, spans, context)
    builder.feed(own, messages)
    if not builder.steps:
        return None
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": context.session_id,
        "trajectory_id": context.trajectory_id,
        "agent": context.agent,
        "steps": [
            step.as_dict(index, context.reasoning_effort)
            for index, step in enumerate(builder.steps, start=1)
        ],
    }
    notes = builder.notes()
    if notes:
        document["notes"] = notes
    document["final_metrics"] = builder.final_metrics()
    if context.continued_by:
        document["continued_trajectory_ref"] = context.continued_by
    extra = dict(context.extra)
    if event_records.ContextWindow.type in builder.extra:
        extra["context_window"] = builder.extra["context_window"]
    document["extra"] = extra
    if builder.children:
        document["subagent_trajectories"] = builder.children
    return document


def run_trajectory(run: RunRecording) -> dict[str, Any] | None:
    """The ATIF document of one recorded run (None when it holds nothing to show)."""
    header = _json_object(run.header)
    version = header.get("seri_version")
    model = header.get("model")
    agent: dict[str, Any] = {
        "name": AGENT_NAME,
        "version": version if isinstance(version, str) and version else "unknown",
    }
    if isinstance(model, str) and model:
        agent["model_name"] = model
    agent["extra"] = header
    effort = header.get("reasoning_effort")
    context = _Context(
        session_id=run.session_id,
        trajectory_id=run.run_id,
        agent=agent,
        reasoning_effort=effort if isinstance(effort, str | int | float) else None,
        extra={
            "seri_session": run.session_id,
            "seri_run": run.run_id,
            "recorded": True,
            "started": _stamp(run.started),
        },
        continued_by=run.continued_by,
    )
    subagents = {s.session_id: s for s in run.subagents}
    return _document(context, run.events, run.messages, subagents)


def unrecorded_trajectory(part: UnrecordedMessages, exporter_version: str) -> dict[str, Any] | None:
    """The ATIF document of a session's messages that no recorded run covers."""
    agent: dict[str, Any] = {
        "name": AGENT_NAME,
        # Imported sessions were written by the older release: which version is not known.
        "version": "unknown" if part.imported else exporter_version,
    }
    if part.model:
        agent["model_name"] = part.model
    agent["extra"] = {"project": part.project, "imported": part.imported}
    context = _Context(
        session_id=part.session_id,
        trajectory_id=part.session_id,
        agent=agent,
        reasoning_effort=None,
        extra={"seri_session": part.session_id, "recorded": False},
        continued_by=part.continued_by,
    )
    subagents = {s.session_id: s for s in part.subagents}
    return _document(context, (), part.messages, subagents)
