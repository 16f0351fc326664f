"""Every real capture of tests/captures/captures.json, replayed.

HTTP bodies and SSE streams go through seri's real client over loopback, served byte for byte
by the fake; messages, usage objects and model listings through the pure readers. Each
capture's `expect` says what seri must make of it (its `seri_does` says it in words)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from seri.io.provider.provider import ProviderClient
from seri.pure.provider.output_budget import MIN_OUTPUT_TOKENS, OUTPUT_MARGIN, lowered_output_budget
from seri.pure.provider.overflow_table import overflow_numbers
from seri.pure.provider.provider_errors import classify_http_error, is_context_overflow
from seri.pure.provider.provider_failure import ProviderFailure
from seri.pure.provider.reported_usage import usage_from
from seri.pure.provider.server_windows import (
    window_from_listing,
    window_from_ollama_show,
    window_from_props,
)
from seri.pure.provider.stream_assembly import StreamResult
from seri.pure.provider.wire import build_request
from seri.pure.session.records import Message
from tests.captures.table import load, render
from tests.conftest import REPO

CAPTURES = load()
NOW = 1761200000.0  # a fixed "now" for reset times, a day before the daily cap below resets


def _ids(kind: str) -> list[dict[str, Any]]:
    return [c for c in CAPTURES if c["transport"] == kind]


def _send(*steps: dict[str, Any]) -> tuple[StreamResult | ProviderFailure, int]:
    """One chat call through the real client, against a fake serving these steps' bytes; what
    came back, and how many requests it took (at most two attempts)."""
    request = build_request("fake/model", (Message(role="user", text="hi"),))
    with (
        FakeModel(list(steps)) as fake,
        ProviderClient(
            fake.base_url,
            "sk-test-key",
            max_attempts=2,
            sleep=lambda _: None,
            wall_clock=lambda: NOW,
            jitter=lambda: 0.0,
            idle_timeout=5.0,
        ) as client,
    ):
        return client.stream_chat(request), len(fake.requests)


def _check_failure(failure: ProviderFailure, expect: dict[str, Any]) -> None:
    if "kind" in expect:
        assert failure.kind == expect["kind"], failure.message
    if expect.get("not_overflow"):
        assert failure.kind != "context_overflow"
    if "retryable" in expect:
        assert failure.retryable == expect["retryable"], failure.message
    if "words" in expect:
        assert expect["words"] in failure.message, failure.message
    if "affordable" in expect:
        assert failure.affordable_tokens == expect["affordable"]
        lowered = lowered_output_budget(failure, {})
        if expect["affordable"]:
            assert lowered is not None and lowered[1] == expect["affordable"] - OUTPUT_MARGIN
        else:
            assert lowered is None
    numbers = failure.overflow
    for key, field in (
        ("limit", "limit"),
        ("input", "input_tokens"),
        ("output", "output_tokens"),
        ("requested", "requested"),
    ):
        if key in expect:
            assert numbers is not None and getattr(numbers, field) == expect[key], numbers
    if "input_fits" in expect:
        assert numbers is not None and numbers.input_fits() == expect["input_fits"]
        assert numbers.limit is not None and numbers.input_tokens is not None
        room = numbers.limit - numbers.input_tokens - OUTPUT_MARGIN
        lowered = lowered_output_budget(failure, {})
        if expect["input_fits"] and room >= MIN_OUTPUT_TOKENS:
            assert lowered is not None and lowered[1] == room
        else:
            assert lowered is None, "max_tokens lowered although that cannot help"


@pytest.mark.parametrize("capture", _ids("http"), ids=lambda c: c["id"])
def test_http_error_bodies(capture: dict[str, Any]) -> None:
    step = {
        "status": capture["status"],
        "body": capture["body"],
        **({"headers": capture["headers"]} if "headers" in capture else {}),
    }
    outcome, sent = _send(step, step)
    assert isinstance(outcome, ProviderFailure), outcome
    _check_failure(outcome, capture["expect"])
    retried = outcome.retryable and outcome.kind != "context_overflow"
    assert sent == (2 if retried else 1)
    assert "sk-test-key" not in repr(outcome)


@pytest.mark.parametrize("capture", _ids("sse"), ids=lambda c: c["id"])
def test_streams(capture: dict[str, Any]) -> None:
    expect = capture["expect"]
    outcome, sent = _send({"raw_sse": capture["sse"]}, {"text": "after a retry"})
    if expect.get("retried"):
        assert isinstance(outcome, StreamResult) and outcome.message.text == "after a retry"
        assert sent == 2
        return
    assert sent == 1, "a stream that delivered something was sent again"
    if expect.get("kind"):
        assert isinstance(outcome, ProviderFailure), outcome
        _check_failure(outcome, expect)
        return
    assert isinstance(outcome, StreamResult), outcome
    message = outcome.message
    assert message.text == expect.get("text", message.text)
    assert message.reasoning == expect.get("reasoning", message.reasoning)
    assert outcome.refusal == expect.get("refusal", "")
    if "finish" in expect:
        assert outcome.finish_reason == expect["finish"]
    if "tool_calls" in expect:
        assert len(message.tool_calls) == expect["tool_calls"]
        assert outcome.tool_calls_runnable == expect["runnable"]
    if expect.get("failed"):
        assert not outcome.complete and outcome.failure is not None
    if "input_tokens" in expect:
        assert outcome.usage is not None
        assert outcome.usage.input_tokens == expect["input_tokens"]
        assert outcome.usage.cached_tokens == expect["cached_tokens"]


@pytest.mark.parametrize("capture", _ids("json200"), ids=lambda c: c["id"])
def test_errors_in_a_200_body(capture: dict[str, Any]) -> None:
    outcome, sent = _send({"status": 200, "body": capture["body"]}, {"text": "after a retry"})
    assert capture["expect"]["retried"]
    assert isinstance(outcome, StreamResult) and outcome.message.text == "after a retry"
    assert sent == 2


@pytest.mark.parametrize("capture", _ids("message") + _ids("message-402"), ids=lambda c: c["id"])
def test_messages(capture: dict[str, Any]) -> None:
    expect, text = capture["expect"], capture["text"]
    status = 402 if capture["transport"] == "message-402" else 400
    failure = classify_http_error(status, json.dumps({"error": {"message": text}}), now=NOW)
    if status == 402:
        _check_failure(failure, expect)
        return
    assert is_context_overflow(400, text) == expect["overflow"]
    numbers = overflow_numbers(text)
    for key, field in (("limit", "limit"), ("input", "input_tokens"), ("output", "output_tokens")):
        if key in expect:
            assert getattr(numbers, field) == expect[key], numbers
    _check_failure(failure, {k: v for k, v in expect.items() if k != "overflow"})


@pytest.mark.parametrize("capture", _ids("usage"), ids=lambda c: c["id"])
def test_usage_objects(capture: dict[str, Any]) -> None:
    usage = usage_from(capture["usage"])
    for key, value in capture["expect"].items():
        assert getattr(usage, key) == value, (key, usage)


@pytest.mark.parametrize(
    "capture", _ids("models") + _ids("props") + _ids("ollama_show"), ids=lambda c: c["id"]
)
def test_windows_servers_report(capture: dict[str, Any]) -> None:
    body = capture["body"]
    body = json.loads(body) if isinstance(body, str) else body
    if capture["transport"] == "models":
        window = window_from_listing(body, capture["model"])
    elif capture["transport"] == "props":
        window = window_from_props(body)
    else:
        window = window_from_ollama_show(body)
    assert window == capture["expect"]["window"]


def test_every_capture_is_replayed_and_in_the_table() -> None:
    replayed = {
        "http",
        "sse",
        "json200",
        "message",
        "message-402",
        "usage",
        "models",
        "props",
        "ollama_show",
    }
    assert {c["transport"] for c in CAPTURES} <= replayed
    assert len({c["id"] for c in CAPTURES}) == len(CAPTURES)
    assert all(c["source"] and c["seri_does"] for c in CAPTURES)
    assert (REPO / "tests" / "captures" / "README.md").read_text() == render(), (
        "regenerate: python -m tests.captures.table > tests/captures/README.md"
    )
