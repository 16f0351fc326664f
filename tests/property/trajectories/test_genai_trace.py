"""Invariants of the GenAI trace mapping and its OTLP encodings (issue 18).

Runs are generated the way seri records them (a header, then tasks of model calls, tool
calls with results, denials and rejections, subagents inside `task` calls, compactions,
retries, overflows, a final turn_end; sometimes cut short, sometimes with the clock going
back), and also as arbitrary sequences of record types. Whatever comes in:

* every span but one root per trace has its parent in the same trace;
* a span starts before it ends, inside its parent, and its events inside it;
* the roots' token and cost totals are the sums of the recorded model calls;
* without the opt-in no content reaches the encoded request; with it, secrets do not;
* the same records give the same spans (ids included), and the official protobuf and
  OTLP/JSON decoders read back exactly what was mapped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from seri.pure.trajectories.genai_attributes import Content
from seri.pure.trajectories.genai_metrics import OPERATION_DURATION, TOKEN_USAGE, histograms
from seri.pure.trajectories.genai_scopes import TraceState, TrajectoryRecord
from seri.pure.trajectories.genai_trace import FinishedTrace, finished_traces, trace_end, trace_step
from seri.pure.trajectories.otlp_json import trace_request as json_request
from seri.pure.trajectories.otlp_model import Producer, Span
from seri.pure.trajectories.otlp_protobuf import trace_request as protobuf_request
from seri.pure.trajectories.redaction import Redactor
from tests.otlp_receiver import attributes_of, parse_json_traces

MARKER = "CONTENT-7f3a"  # put in every content field; must never leak without the opt-in
SECRET = "hunter2-secret-value-99"  # a header value: redacted even with the opt-in
PRODUCER = Producer((("service.name", "seri"),), "seri", "0")
CONTENT_KEYS = {
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "seri.tool.error_output",
    "seri.refusal",
}

NAMES = st.sampled_from(["read_file", "bash", "edit", "write_file", "glob", "grep"])
STATUSES = st.sampled_from(
    ["done", "done", "max_turns", "interrupted", "overflow", "error", "length"]
)


def _usage(draw: Any) -> dict[str, Any]:
    if draw(st.integers(0, 9)) == 0:
        return {"reported": False}
    return {
        "input_tokens": draw(st.integers(0, 200_000)),
        "output_tokens": draw(st.integers(0, 20_000)),
        "reasoning_tokens": draw(st.integers(0, 5_000)),
        "cached_tokens": draw(st.integers(0, 100_000)),
        "cache_write_tokens": draw(st.integers(0, 10_000)),
        "cost": draw(st.one_of(st.none(), st.floats(0, 5, allow_nan=False))),
        "upstream_cost": None,
        "provider": "Prov",
    }


def _content(draw: Any) -> str:
    return draw(st.sampled_from([MARKER, f"x {MARKER} y", f"{MARKER} {SECRET}"]))


@st.composite
def _tool(draw: Any, ids: Iterator[int], depth: int) -> list[tuple[str, dict[str, Any]]]:
    call_id = f"c{next(ids)}"
    name = "task" if depth == 0 and draw(st.integers(0, 5)) == 0 else draw(NAMES)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("tool_call", {"id": call_id, "name": name, "arguments": _content(draw)})
    ]
    how = draw(st.sampled_from(["ok", "ok", "error", "denied", "rejected", "protected", "open"]))
    if name == "task":
        child = f"child{next(ids)}"
        steps.append(("subagent_start", {"child": child, "description": _content(draw)}))
        for _ in range(draw(st.integers(0, 3))):
            steps += draw(_call(ids, depth + 1))
        status = draw(STATUSES)
        steps.append(("turn_end", {"status": status, "turns": 2}))
        steps.append(("subagent_end", {"child": child, "status": status, "turns": 2}))
        steps.append(
            ("tool_result", {"id": call_id, "name": name, "ok": True, "text": _content(draw)})
        )
        return steps
    if how == "denied":
        who = draw(st.sampled_from(["policy", "user"]))
        steps.append(
            (
                "denial",
                {"id": call_id, "name": name, "rule": "", "reason": _content(draw), "by": who},
            )
        )
    elif how == "rejected":
        steps.append(("tool_result", {"id": call_id, "ok": False, "error": f"not run: {MARKER}"}))
    elif how == "protected":
        steps.append(
            (
                "denial",
                {
                    "id": call_id,
                    "name": name,
                    "rule": "(protected)",
                    "reason": _content(draw),
                    "by": "policy",
                },
            )
        )
        steps.append(
            (
                "tool_result",
                {
                    "id": call_id,
                    "name": name,
                    "ok": False,
                    "interrupted": False,
                    "bytes": 9,
                    "text": _content(draw),
                },
            )
        )
    elif how != "open":
        if name in ("edit", "write_file"):
            steps.append(
                (
                    "checkpoint",
                    {
                        "tool": name,
                        "path": _content(draw),
                        "existed": True,
                        "bytes": 3,
                        "sha256": "ab",
                    },
                )
            )
            steps.append(
                ("edit", {"tool": name, "outcome": "applied", "path": _content(draw), "bytes": 3})
            )
            steps.append(
                (
                    "check",
                    {
                        "command": _content(draw),
                        "exit_code": 0,
                        "ok": True,
                        "seconds": 0.1,
                        "output": _content(draw),
                    },
                )
            )
        ok = how == "ok"
        steps.append(
            (
                "tool_result",
                {
                    "id": call_id,
                    "name": name,
                    "ok": ok,
                    "interrupted": False,
                    "bytes": 12,
                    "text": _content(draw),
                },
            )
        )
    return steps


@st.composite
def _call(draw: Any, ids: Iterator[int], depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    retry = {"status": 429, "delay": 0.5, "reason": "rate limited"}
    steps: list[tuple[str, dict[str, Any]]] = [
        ("retry", {"attempt": attempt + 1, **retry}) for attempt in range(draw(st.integers(0, 2)))
    ]
    if draw(st.integers(0, 7)) == 0:
        steps.append(
            (
                "overflow",
                {
                    "error": "too long",
                    "estimate": 9000,
                    "purpose": "turn",
                    "token_scale": 1.1,
                    "context_window": 8000,
                },
            )
        )
        steps += [("summary_call", {"usage": _usage(draw), "finish_reason": "stop"})]
        steps.append(
            (
                "compaction",
                {"trigger": "overflow", "focus": _content(draw), "evicted": 4, "kept": 3},
            )
        )
    tools = [draw(_tool(ids, depth)) for _ in range(draw(st.integers(0, 3)))]
    call: dict[str, Any] = {
        "finish_reason": draw(st.sampled_from(["stop", "tool_calls", "length", "incomplete"])),
        "usage": _usage(draw),
        "tool_calls": len(tools),
        "model": draw(st.sampled_from(["m/a", "m/b", None])),
        "generation_id": draw(st.sampled_from(["gen-1", None])),
    }
    if draw(st.integers(0, 9)) == 0:
        call["refusal"] = _content(draw)
    steps.append(("model_call", call))
    for tool in tools:
        steps += tool
    return steps


@st.composite
def _task(draw: Any, ids: Iterator[int]) -> list[tuple[str, dict[str, Any]]]:
    steps: list[tuple[str, dict[str, Any]]] = []
    if draw(st.integers(0, 4)) == 0:
        calls = draw(st.integers(1, 3))
        steps += [("summary_call", {"usage": _usage(draw), "finish_reason": "stop"})] * calls
        steps.append(("compaction", {"trigger": "auto", "focus": "", "evicted": 9, "kept": 3}))
    for _ in range(draw(st.integers(0, 4))):
        steps += draw(_call(ids))
        if draw(st.integers(0, 9)) == 0:
            steps.append(("rule", {"name": "py", "paths": [_content(draw)]}))
    end: dict[str, Any] = {"status": draw(STATUSES), "turns": 3}
    if end["status"] in ("error", "interrupted", "length") and draw(st.booleans()):
        end["error"] = "the provider said no"
    steps.append(("turn_end", end))
    return steps


@st.composite
def _between(draw: Any) -> list[tuple[str, dict[str, Any]]]:
    """What a person may do between tasks: /compact, /model, nothing."""
    what = draw(st.sampled_from(["nothing", "nothing", "compact", "model", "shrink"]))
    if what == "compact":
        calls = [("summary_call", {"usage": _usage(draw), "finish_reason": "stop"})] * draw(
            st.integers(0, 2)
        )
        return [
            *calls,
            ("compaction", {"trigger": "manual", "focus": _content(draw), "evicted": 5, "kept": 2}),
        ]
    if what == "model":
        return [("model_switch", {"model": "m/c"})]
    if what == "shrink":
        return [("shrink", {"trigger": "manual", "elided": 2, "messages": 2})]
    return []


# Run tags as a header holds them (seri.pure.session.run_tags): well-formed keys, any short values.
RUN_TAG_MAPS = st.dictionaries(
    st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-]{0,8}", fullmatch=True),
    st.text(st.characters(categories=("L", "N", "P")), min_size=1, max_size=12),
    max_size=4,
)


@st.composite
def recorded_runs(draw: Any) -> list[TrajectoryRecord]:
    """One or two runs as seri records them, with times, maybe cut short."""
    records: list[TrajectoryRecord] = []
    clock = 1_790_000_000.0 + draw(st.floats(0, 1e6))
    for run_number in range(draw(st.integers(1, 2))):
        ids = iter(range(10_000))
        run, session = f"run{run_number}", f"session{draw(st.integers(0, 1))}"
        header = {
            "model": draw(st.sampled_from(["m/a", "anthropic/claude", ""])),
            "base_url": draw(
                st.sampled_from(["https://openrouter.ai/api/v1", "http://127.0.0.1:8080/v1", None])
            ),
            "seri_version": "0.1.0",
            "interactive": draw(st.booleans()),
            "sampling": {"temperature": 0.2},
        }
        if draw(st.booleans()):
            header["tags"] = draw(RUN_TAG_MAPS)
        records.append(TrajectoryRecord("header", session, run, clock, header, 0))
        steps: list[tuple[str, dict[str, Any]]] = []
        if draw(st.booleans()):
            steps.append(("context_window", {"tokens": 128000, "from": "server"}))
        for _ in range(draw(st.integers(0, 3))):
            steps += draw(_between())
            steps += draw(_task(ids))
        if draw(st.booleans()):
            steps.append(("run_usage", {"calls": 1, "input_tokens": 1}))
        if steps and draw(st.integers(0, 4)) == 0:
            steps = steps[: draw(st.integers(0, len(steps) - 1))]  # the process died here
        for ordinal, (type_, data) in enumerate(steps, start=1):
            step = draw(st.sampled_from([0.0, 0.001, 0.05, 1.5, 30.0, -0.5]))
            clock += step
            records.append(TrajectoryRecord(type_, session, run, clock, data, ordinal))
    return records


RECORD_TYPES = [
    "model_call",
    "summary_call",
    "retry",
    "tool_call",
    "tool_result",
    "denial",
    "checkpoint",
    "edit",
    "check",
    "compaction",
    "shrink",
    "overflow",
    "turn_end",
    "subagent_start",
    "subagent_end",
    "run_usage",
    "rule",
    "model_switch",
    "context_window",
    "session_rule",
    "memory_staged",
    "output_budget_lowered",
    "task_start",
    "some_future_type",
]


@st.composite
def arbitrary_records(draw: Any) -> list[TrajectoryRecord]:
    """Record types in any order with fields drawn from a small pool: nothing seri writes,
    but nothing the mapping may fall over on either."""
    records = []
    value = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 5),
        st.sampled_from(["a", "c1", "child1", MARKER]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.lists(st.integers(0, 3), max_size=2),
        st.dictionaries(st.sampled_from(["input_tokens", "reported"]), st.integers(0, 9)),
    )
    fields = st.dictionaries(
        st.sampled_from(
            [
                "id",
                "name",
                "child",
                "status",
                "usage",
                "trigger",
                "purpose",
                "error",
                "started",
                "model",
                "tokens",
                "turns",
                "text",
                "arguments",
                "ok",
            ]
        ),
        value,
        max_size=5,
    )
    clock = 1_790_000_000.0
    for ordinal in range(draw(st.integers(0, 40))):
        type_ = draw(st.sampled_from(["header", *RECORD_TYPES]))
        clock += draw(st.sampled_from([0.0, 0.2, -1.0, 3.0]))
        run = draw(st.sampled_from(["r1", "r2"]))
        records.append(TrajectoryRecord(type_, "s", run, clock, draw(fields), ordinal))
    return records


def _all_spans(records: list[TrajectoryRecord], content: Content) -> list[Span]:
    return [span for trace in finished_traces(records, content) for span in trace.spans]


def _check_tree(spans: list[Span]) -> None:
    by_id = {span.span_id: span for span in spans}
    assert len(by_id) == len(spans), "span ids are unique"
    roots = Counter(span.trace_id for span in spans if not span.parent_span_id)
    assert all(count == 1 for count in roots.values())
    for span in spans:
        assert span.start_ns <= span.end_ns, span
        for event in span.events:
            assert span.start_ns <= event.time_ns <= span.end_ns
        if span.parent_span_id:
            parent = by_id[span.parent_span_id]
            assert parent.trace_id == span.trace_id
            assert parent.start_ns <= span.start_ns and span.end_ns <= parent.end_ns
        else:
            assert roots[span.trace_id] == 1
    assert set(roots) == {span.trace_id for span in spans}


def _recorded_sum(records: list[TrajectoryRecord], field: str) -> float:
    total = 0.0
    for record in records:
        usage = record.data.get("usage")
        if record.type in ("model_call", "summary_call") and isinstance(usage, dict):
            value = usage.get(field)
            if (
                usage.get("reported") is not False
                and isinstance(value, int | float)
                and not isinstance(value, bool)
            ):
                total += max(value, 0) if field != "cost" else value
    return total


@settings(max_examples=150, deadline=None)
@given(recorded_runs())
def test_every_span_has_its_parent_in_its_trace_and_times_nest(
    records: list[TrajectoryRecord],
) -> None:
    _check_tree(_all_spans(records, Content()))


@settings(max_examples=150, deadline=None)
@given(arbitrary_records())
def test_any_sequence_of_records_still_makes_well_formed_traces(
    records: list[TrajectoryRecord],
) -> None:
    _check_tree(_all_spans(records, Content()))
    _check_tree(_all_spans(records, Content(captured=True)))


@settings(max_examples=150, deadline=None)
@given(recorded_runs())
def test_the_roots_totals_are_the_sums_of_the_recorded_calls(
    records: list[TrajectoryRecord],
) -> None:
    traces = list(finished_traces(records, Content()))
    roots = [trace.root for trace in traces]
    keys = {
        "input_tokens": "gen_ai.usage.input_tokens",
        "output_tokens": "gen_ai.usage.output_tokens",
        "cached_tokens": "gen_ai.usage.cache_read.input_tokens",
        "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
        "reasoning_tokens": "gen_ai.usage.reasoning.output_tokens",
    }
    for field, key in keys.items():
        from_roots = sum(root.attribute(key) or 0 for root in roots)  # type: ignore[misc]
        assert from_roots == _recorded_sum(records, field), field
    cost = sum(root.attribute("gen_ai.usage.cost") or 0.0 for root in roots)  # type: ignore[misc]
    assert abs(cost - _recorded_sum(records, "cost")) < 1e-6
    # And the token histogram holds the same input and output totals, one value per call.
    observations = [seen for trace in traces for seen in trace.observations]
    for metric in histograms(observations, 0, 1):
        for point in metric.points:
            assert sum(point.bucket_counts) == point.count
    tokens = [seen for seen in observations if seen.metric == TOKEN_USAGE]
    for kind, field in (("input", "input_tokens"), ("output", "output_tokens")):
        values = [s.value for s in tokens if ("gen_ai.token.type", kind) in s.attributes]
        assert sum(values) == _recorded_sum(records, field)
    calls = sum(1 for r in records if r.type in ("model_call", "summary_call"))
    chats = [s for t in traces for s in t.spans if s.name.startswith("chat")]
    assert len(chats) >= calls
    durations = [seen for seen in observations if seen.metric == OPERATION_DURATION]
    assert len(durations) <= len(chats)


@settings(max_examples=150, deadline=None)
@given(recorded_runs())
def test_no_content_leaves_without_the_opt_in(records: list[TrajectoryRecord]) -> None:
    spans = _all_spans(records, Content())
    encoded = protobuf_request(PRODUCER, spans)
    assert MARKER.encode() not in encoded
    assert MARKER not in json.dumps(json_request(PRODUCER, spans))
    for span in spans:
        assert not CONTENT_KEYS & {key for key, _ in span.attributes}


@settings(max_examples=100, deadline=None)
@given(recorded_runs())
def test_with_the_opt_in_content_is_there_and_secrets_are_not(
    records: list[TrajectoryRecord],
) -> None:
    content = Content(captured=True, redactor=Redactor.of([SECRET]))
    spans = _all_spans(records, content)
    encoded = protobuf_request(PRODUCER, spans)
    assert SECRET.encode() not in encoded
    has_arguments = any(r.type == "tool_call" for r in records)
    if has_arguments:
        assert MARKER.encode() in encoded


@settings(max_examples=100, deadline=None)
@given(recorded_runs(), st.booleans())
def test_the_same_records_give_the_same_spans(
    records: list[TrajectoryRecord], captured: bool
) -> None:
    content = Content(captured=captured)
    first = _all_spans(records, content)
    assert first == _all_spans(records, content)
    # Fed one record at a time, as a live export does, the spans are the same.
    state = TraceState(content)
    live: list[Span] = []
    for record in records:
        state, output = trace_step(state, record)
        live += output.spans
    state, output = trace_end(state)
    live += output.spans
    assert sorted(live, key=lambda s: s.span_id) == sorted(first, key=lambda s: s.span_id)


def _decoded(spans: list[Span]) -> list[dict[str, Any]]:
    request = ExportTraceServiceRequest.FromString(protobuf_request(PRODUCER, spans))
    return _plain(request)


_FIELDS = ("trace", "span", "parent", "name", "kind", "start", "end", "attributes", "events")


def _plain(request: ExportTraceServiceRequest) -> list[dict[str, Any]]:
    """The decoded spans as plain values, to compare with what was mapped."""
    return [
        {
            **dict(
                zip(
                    _FIELDS,
                    (
                        span.trace_id,
                        span.span_id,
                        span.parent_span_id,
                        span.name,
                        span.kind,
                        span.start_time_unix_nano,
                        span.end_time_unix_nano,
                        attributes_of(span.attributes),
                        [
                            (e.name, e.time_unix_nano, attributes_of(e.attributes))
                            for e in span.events
                        ],
                    ),
                    strict=True,
                )
            ),
            "status": (span.status.code, span.status.message),
        }
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]


def _expected(spans: list[Span]) -> list[dict[str, Any]]:
    return [
        {
            **dict(
                zip(
                    _FIELDS,
                    (
                        span.trace_id,
                        span.span_id,
                        span.parent_span_id,
                        span.name,
                        span.kind,
                        span.start_ns,
                        span.end_ns,
                        dict(span.attributes),
                        [(e.name, e.time_ns, dict(e.attributes)) for e in span.events],
                    ),
                    strict=True,
                )
            ),
            "status": (span.status_code, span.status_message),
        }
        for span in spans
    ]


@settings(max_examples=100, deadline=None)
@given(recorded_runs(), st.booleans())
def test_the_official_decoders_read_back_what_was_mapped(
    records: list[TrajectoryRecord], captured: bool
) -> None:
    spans = _all_spans(records, Content(captured=captured))
    assert _decoded(spans) == _expected(spans)
    from_json = parse_json_traces(json.dumps(json_request(PRODUCER, spans)))
    assert _plain(from_json) == _expected(spans)


def test_finished_traces_keep_whole_tasks_that_ended_after_since() -> None:
    records = [
        TrajectoryRecord("header", "s", "r", 100.0, {"model": "m"}, 0),
        TrajectoryRecord("model_call", "s", "r", 110.0, {"usage": {"input_tokens": 5}}, 1),
        TrajectoryRecord("turn_end", "s", "r", 120.0, {"status": "done"}, 2),
        TrajectoryRecord("model_call", "s", "r", 130.0, {"usage": {"input_tokens": 7}}, 3),
        TrajectoryRecord("turn_end", "s", "r", 200.0, {"status": "done"}, 4),
    ]
    kept: list[FinishedTrace] = list(finished_traces(records, Content(), since_ns=150 * 10**9))
    assert len(kept) == 1
    assert kept[0].root.start_ns == 120 * 10**9  # begins before since, sent whole
    assert kept[0].root.attribute("gen_ai.usage.input_tokens") == 7
