"""Prompt caching that happens: breakpoints where the model family needs them, a prefix that
stays the same bytes from call to call, and the cached share reported per run."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.request_schema import assert_valid_request, pairing_ok

KEY = "sk-or-v1-" + "cd34" * 16


def _env(fake: FakeModel, model: str) -> dict[str, str]:
    return {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, "SERI_MODEL": model}


def _marked(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any("cache_control" in part for part in content)


def _unmarked(message: dict[str, Any]) -> dict[str, Any]:
    """The message without its markers: a marked text is a one-part list like every other."""
    content = message.get("content")
    if isinstance(content, list):
        parts = [{k: v for k, v in part.items() if k != "cache_control"} for part in content]
        return {**message, "content": parts}
    return message


def _text(message: dict[str, Any]) -> dict[str, Any]:
    """The message with its text as a plain string, as the pairing check reads it."""
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": "".join(part["text"] for part in content)}
    return message


def _script() -> list[dict[str, Any]]:
    usage = {
        "prompt_tokens": 1000,
        "prompt_tokens_details": {"cached_tokens": 900, "cache_write_tokens": 80},
    }
    return [
        {
            "tool_calls": [{"id": "g1", "name": "glob", "arguments": {"pattern": "*"}}],
            "usage": usage,
        },
        {
            "tool_calls": [{"id": "g2", "name": "glob", "arguments": {"pattern": "*.py"}}],
            "usage": usage,
        },
        {"text": "first done", "usage": usage},
        {"text": "second done", "usage": usage},
    ]


def test_anthropic_requests_carry_breakpoints_over_an_unchanging_prefix(
    run_seri: RunSeri, project: Path
) -> None:
    with FakeModel(_script()) as fake:
        env = _env(fake, "anthropic/claude-sonnet-4.5")
        first = run_seri("chat", "-p", "list the files", env=env)
        second = run_seri("chat", "--continue", "-p", "again", env=env)
        requests = fake.requests
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert len(requests) == 4
    for body in requests:
        assert_valid_request(body)
        assert pairing_ok([_text(m) for m in body["messages"]][1:])
        for message in body["messages"]:
            if message["role"] != "assistant" and message["content"]:
                # Every text goes as a one-part list, so a marker moving changes only itself.
                assert [set(part) - {"cache_control"} for part in message["content"]] == [
                    {"type", "text"}
                ]
        marks = [i for i, m in enumerate(body["messages"]) if _marked(m)]
        assert len(marks) == 2
        assert marks[0] == 0, "the frozen system prompt is a breakpoint"
        assert marks[-1] == len(body["messages"]) - 1, "so is the moving end"
        assert all(body["messages"][i]["role"] in ("system", "user", "tool") for i in marks)
    for earlier, later in itertools.pairwise(requests):
        old, new = earlier["messages"], later["messages"]
        # Without the markers, each request is the one before it plus what happened since.
        assert json.dumps([_unmarked(m) for m in old]) == json.dumps(
            [_unmarked(m) for m in new[: len(old)]]
        )
        # Up to the earlier request's moving end, the bytes are exactly the same.
        end = max(i for i, m in enumerate(old) if _marked(m))
        assert json.dumps(old[:end]) == json.dumps(new[:end])
    assert "prompt cache: 90% of 3,000 input tokens read from cache" in first.stderr
    exported = [json.loads(line) for line in run_seri("trajectory", "export").stdout.splitlines()]
    runs = [e for e in exported if e["type"] == "run_usage"]
    assert [r["cached_share"] for r in runs] == [0.9, 0.9]
    assert runs[0]["cache_markers"] == 6
    assert runs[0]["cache_write_tokens"] == 240
    calls = [e for e in exported if e["type"] == "model_call"]
    assert calls[0]["usage"]["cache_write_tokens"] == 80
    assert calls[0]["model"] == "anthropic/claude-sonnet-4.5"
    assert calls[0]["generation_id"]


def test_models_that_cache_on_their_own_get_no_markers(run_seri: RunSeri) -> None:
    with FakeModel(_script()[2:3]) as fake:
        result = run_seri("chat", "-p", "hi", env=_env(fake, "openai/gpt-4o"))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert not any(_marked(m) for m in requests[0]["messages"])
    # Caching still happened on the provider's side, and the person is told how much.
    assert "prompt cache: 90%" in result.stderr
