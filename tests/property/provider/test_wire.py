"""Messages on the wire: schema-valid bodies, lossless round trips, the pairing invariant."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.provider.wire import build_request, from_wire_messages, has_content, to_wire_messages
from seri.pure.session.records import Message, ToolCall, assistant, tool_result, user
from tests.pairing import pairing_problems
from tests.property.strategies import valid_wire_histories

SCHEMA_NAME = "openrouter-chat-request.schema.json"
SCHEMA_PLACES = (
    Path(__file__).resolve().parents[2] / "schemas" / SCHEMA_NAME,
    Path("/work/shared/reference") / SCHEMA_NAME,
)


@functools.cache
def request_validator() -> Any:
    for place in SCHEMA_PLACES:
        if place.exists():
            schema = json.loads(place.read_text(encoding="utf-8"))
            return jsonschema.Draft202012Validator(schema)
    pytest.skip(f"{SCHEMA_NAME} not found")


def assert_valid(body: dict[str, Any]) -> None:
    errors = sorted(request_validator().iter_errors(body), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]


TOOLS = (
    {
        "name": "read_file",
        "description": "Read a file",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {"name": "bash", "description": "Run a command", "parameters": {"type": "object"}},
)


@settings(max_examples=60, deadline=None)
@given(valid_wire_histories())
def test_built_requests_validate_against_the_schema(history: tuple[Message, ...]) -> None:
    body = build_request(
        "anthropic/claude-sonnet-4",
        history,
        TOOLS,
        sampling={"temperature": 0.2, "max_tokens": 1024, "seed": 7},
        provider_pin={"order": ["deepinfra/fp8"], "allow_fallbacks": False},
        reasoning_effort="high",
    )
    assert_valid(body)


@settings(max_examples=200, deadline=None)
@given(valid_wire_histories())
def test_wire_round_trip_is_lossless(history: tuple[Message, ...]) -> None:
    wire = to_wire_messages(history)
    json.loads(json.dumps(wire))  # plain JSON all the way down
    # An assistant turn with neither text nor calls (a reasoning-only partial) is not sent.
    assert from_wire_messages(wire) == tuple(m for m in history if has_content(m))


@settings(max_examples=200, deadline=None)
@given(valid_wire_histories())
def test_generated_histories_are_paired(history: tuple[Message, ...]) -> None:
    assert pairing_problems(history) == ()


@settings(max_examples=200, deadline=None)
@given(valid_wire_histories(), st.data())
def test_dropping_a_tool_result_breaks_pairing(
    history: tuple[Message, ...], data: st.DataObject
) -> None:
    results = [n for n, m in enumerate(history) if m.role == "tool"]
    if not results:
        return
    drop = data.draw(st.sampled_from(results))
    broken = history[:drop] + history[drop + 1 :]
    problems = pairing_problems(broken)
    assert any(history[drop].tool_call_id in problem for problem in problems)


@settings(max_examples=200, deadline=None)
@given(valid_wire_histories(), st.data())
def test_duplicating_a_tool_result_breaks_pairing(
    history: tuple[Message, ...], data: st.DataObject
) -> None:
    results = [n for n, m in enumerate(history) if m.role == "tool"]
    if not results:
        return
    copy = data.draw(st.sampled_from(results))
    broken = (*history[: copy + 1], history[copy], *history[copy + 1 :])
    assert any("answered 2 times" in problem for problem in pairing_problems(broken))


def test_orphan_and_late_results_are_reported() -> None:
    call = ToolCall(id="c1", name="bash", arguments="{}")
    answered = (user("hi"), assistant(tool_calls=(call,)), tool_result(call, "ok"))
    orphan = (user("hi"), tool_result(call, "ok"))
    assert pairing_problems(answered) == ()
    assert "does not follow" in pairing_problems(orphan)[0]
    late = (user("hi"), assistant(tool_calls=(call,)), user("x"), tool_result(call, "ok"))
    problems = pairing_problems(late)
    assert any("has no result" in p for p in problems)
    assert any("does not follow" in p for p in problems)
    stranger = ToolCall(id="c9", name="bash", arguments="{}")
    wrong = (user("hi"), assistant(tool_calls=(call,)), tool_result(stranger, "ok"))
    assert any("answers no call" in p for p in pairing_problems(wrong))
    twice = (user("hi"), assistant(tool_calls=(call, call)), tool_result(call, "ok"))
    assert any("used twice" in p for p in pairing_problems(twice))


def test_assistant_with_only_tool_calls_has_null_content() -> None:
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "a.py"}')
    (wire,) = to_wire_messages((assistant(tool_calls=(call,)),))
    assert wire == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
            }
        ],
    }
    assert to_wire_messages((assistant("hi"),)) == [{"role": "assistant", "content": "hi"}]


def test_reasoning_details_go_back_unchanged() -> None:
    raw = (
        '[{"type":"reasoning.encrypted","data":"QUJD==","id":"rs_1",'
        '"format":"openai-responses-v1"}]'
    )
    message = Message(role="assistant", text="x", reasoning="r", reasoning_details=raw)
    (wire,) = to_wire_messages((message,))
    assert wire["reasoning"] == "r"
    assert json.dumps(wire["reasoning_details"], separators=(",", ":")) == raw


def test_tool_message_shape() -> None:
    call = ToolCall(id="c1", name="bash", arguments="{}")
    (wire,) = to_wire_messages((tool_result(call, "out", is_error=True),))
    assert wire == {"role": "tool", "tool_call_id": "c1", "content": "out"}


def test_request_body_options() -> None:
    body = build_request("m", (user("hi"),), stream=True)
    assert body["stream_options"] == {"include_usage": True}
    assert body["plugins"] == [{"id": "context-compression", "enabled": False}]
    assert "tools" not in body
    assert "provider" not in body
    assert_valid(body)
    quiet = build_request("m", (user("hi"),), stream=False, compress_overflow=True)
    assert "stream_options" not in quiet
    assert "plugins" not in quiet
    assert quiet["stream"] is False
    assert_valid(quiet)
    wired = build_request("m", (user("hi"),), [{"type": "function", "function": {"name": "x"}}])
    assert wired["tools"] == [{"type": "function", "function": {"name": "x"}}]


def test_sampling_cannot_override_the_body() -> None:
    with pytest.raises(ValueError, match="messages"):
        build_request("m", (user("hi"),), sampling={"messages": []})


def test_a_misspelt_pin_key_fails_the_schema() -> None:
    body = build_request("m", (user("hi"),), provider_pin={"ordr": ["x"]})
    assert list(request_validator().iter_errors(body))
