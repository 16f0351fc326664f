"""What the model's answer really carries, end to end: a refusal, an answer cut while it was
still reasoning, an error as the first event, DeepSeek's reasoning going back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.request_schema import assert_valid_request

KEY = "sk-or-v1-" + "ef56" * 16

REFUSAL_SSE = (
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
    '"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},'
    '"finish_reason":null}]}\n\n'
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o",'
    '"choices":[{"index":0,"delta":{"refusal":"I can\'t help with that."},'
    '"finish_reason":"stop"}]}\n\n'
    "data: [DONE]\n\n"
)


def _env(fake: FakeModel, **extra: str) -> dict[str, str]:
    return {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, **extra}


def _export(run_seri: RunSeri) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run_seri("trajectory", "export").stdout.splitlines()]


def _stored(run_seri: RunSeri) -> list[dict[str, Any]]:
    session = _export(run_seri)[0]["session"]
    shown = run_seri("sessions", "show", session, "--json").stdout.splitlines()
    return [json.loads(line) for line in shown][1:]


def test_a_refusal_is_shown_stored_and_recorded(run_seri: RunSeri) -> None:
    with FakeModel([{"raw_sse": REFUSAL_SSE}]) as fake:
        result = run_seri("chat", "-p", "do something bad", env=_env(fake))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "I can't help with that.\n"
    assert _stored(run_seri)[-1]["text"] == "I can't help with that."
    [call] = [e for e in _export(run_seri) if e["type"] == "model_call"]
    assert call["refusal"] == "I can't help with that."
    assert call["model"] == "gpt-4o" and call["generation_id"] == "chatcmpl-1"


def test_an_answer_cut_while_reasoning_keeps_its_reasoning(run_seri: RunSeri) -> None:
    details = [{"type": "reasoning.text", "text": "thinking hard", "signature": "sig"}]
    step = {
        "reasoning": "thinking hard about it",
        "reasoning_details": details,
        "cut_after_chunks": 3,
    }
    with FakeModel([step]) as fake:
        result = run_seri("chat", "-p", "think", env=_env(fake))
    assert result.returncode == 1
    last = _stored(run_seri)[-1]
    assert last["role"] == "assistant" and last["kind"] == "partial"
    assert last["reasoning"] and not last.get("text")


def test_an_error_as_the_first_event_is_retried(run_seri: RunSeri) -> None:
    first = (
        'data: {"id":"gen-1","object":"chat.completion.chunk","created":1,"model":"m",'
        '"provider":"P","error":{"code":502,"message":"Upstream error"},"choices":[{"index":0,'
        '"delta":{"content":""},"finish_reason":"error"}]}\n\n'
    )
    with FakeModel([{"raw_sse": first}, {"text": "second time lucky"}]) as fake:
        result = run_seri("chat", "-p", "hi", env=_env(fake))
        sent = len(fake.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "second time lucky\n"
    assert sent == 2
    [retry] = [e for e in _export(run_seri) if e["type"] == "retry"]
    assert "Upstream error" in retry["reason"]


def test_deepseek_gets_its_reasoning_back_as_reasoning_content(
    run_seri: RunSeri, project: Path
) -> None:
    script = [
        {
            "reasoning": "list first",
            "reasoning_field": "reasoning_content",
            "tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "*"}}],
        },
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "-p", "go", env=_env(fake, SERI_MODEL="deepseek/deepseek-chat"))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assistant = requests[1]["messages"][2]
    assert assistant["reasoning_content"] == assistant["reasoning"] == "list first"
    for body in requests:
        assert_valid_request(body)


def test_a_reasoning_only_partial_is_kept_but_not_sent(run_seri: RunSeri) -> None:
    step = {"reasoning": "thinking hard about it", "cut_after_chunks": 2}
    with FakeModel([step, {"text": "fine"}]) as fake:
        run_seri("chat", "-p", "think", env=_env(fake))
        again = run_seri("chat", "--continue", "-p", "go on", env=_env(fake))
        requests = fake.requests
    assert again.returncode == 0, again.stderr
    roles = [m["role"] for m in requests[-1]["messages"]]
    assert roles == ["system", "user", "user"], "an empty assistant turn was sent"
    assert_valid_request(requests[-1])


def test_absurd_usage_numbers_are_not_believed(run_seri: RunSeri) -> None:
    """A provider that reports nonsense usage (more prompt tokens than SQLite's integers hold,
    negative counts, a cost of NaN or infinity) loses nothing: the answer is stored and shown,
    the session goes on, and the counts are taken as not reported."""
    steps = [
        {
            "text": "first",
            "usage": {"prompt_tokens": 10**20, "completion_tokens": -5, "cost": float("nan")},
        },
        {"text": "second", "usage": {"prompt_tokens": -7, "cost": float("inf")}},
    ]
    with FakeModel(steps) as fake:
        first = run_seri("chat", "-p", "one", env=_env(fake, SERI_MODEL="anthropic/claude-x"))
        second = run_seri(
            "chat", "--continue", "-p", "two", env=_env(fake, SERI_MODEL="anthropic/claude-x")
        )
    assert first.returncode == 0, first.stderr
    assert first.stdout == "first\n"
    assert second.returncode == 0, second.stderr
    assert "internal error" not in first.stderr + second.stderr
    for stderr in (first.stderr, second.stderr):
        assert "nan" not in stderr and "inf" not in stderr and "-7" not in stderr, stderr
    assert [m["text"] for m in _stored(run_seri)] == ["one", "first", "two", "second"]
    calls = [e for e in _export(run_seri) if e["type"] == "model_call"]
    for call in calls:
        usage = call["usage"]
        assert 0 <= usage["input_tokens"] < 2**53 and 0 <= usage["output_tokens"] < 2**53
        assert usage["cost"] is None
