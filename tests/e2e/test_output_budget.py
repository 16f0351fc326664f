"""When only the output budget overflows, seri lowers max_tokens instead of compacting."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri

OVERFLOW = {
    "error": {
        "code": 400,
        "message": (
            "This endpoint's maximum context length is 8192 tokens. However, you requested "
            "about 9000 tokens (1000 of text input, 8000 in the output). Please reduce the "
            "length of either one."
        ),
    }
}


def test_max_tokens_is_lowered_and_the_call_retried(run_seri: RunSeri, seri_home: Path) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"sampling": {"max_tokens": 8000}}))
    script = [{"status": 400, "body": OVERFLOW}, {"text": "fits now"}]
    with FakeModel(script) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", "-p", "hi", env=env)
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fits now\n"
    assert [r["max_tokens"] for r in requests] == [8000, 8192 - 1000 - 64]
    assert "max_tokens lowered" in result.stderr
    events = [json.loads(line) for line in run_seri("trajectory", "export").stdout.splitlines()]
    assert [e["type"] for e in events].count("compaction") == 0


def test_without_an_output_budget_one_is_set(run_seri: RunSeri) -> None:
    """No max_tokens in config: the provider assumed its own default, which did not fit."""
    with FakeModel([{"status": 400, "body": OVERFLOW}, {"text": "fits"}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", "-p", "hi", env=env)
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert "max_tokens" not in requests[0]
    assert requests[1]["max_tokens"] == 8192 - 1000 - 64


def test_when_the_input_itself_is_too_long_it_is_an_overflow(run_seri: RunSeri) -> None:
    too_long = {
        "error": {
            "code": 400,
            "message": "prompt is too long: 217779 tokens > 200000 maximum",
        }
    }
    with FakeModel([{"status": 400, "body": too_long}] * 3) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", "-p", "hi", env=env)
    assert result.returncode == 1
    assert "overflow" in result.stderr
    assert "lowered" not in result.stderr


def test_a_402_that_names_what_is_affordable_is_retried_once(run_seri: RunSeri) -> None:
    # The message OpenRouter sends (anomalyco/opencode#12219, Gitlawb/openclaude#1125).
    credits = {
        "error": {
            "code": 402,
            "message": "This request requires more credits, or fewer max_tokens. You requested "
            "up to 32000 tokens, but can only afford 27342. To increase, visit "
            "https://openrouter.ai/settings/credits and upgrade to a paid account",
            "metadata": {"provider_name": None},
        }
    }
    script = [{"status": 402, "body": credits}, {"status": 402, "body": credits}]
    with FakeModel(script) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", "-p", "hi", env=env)
        requests = fake.requests
    assert result.returncode == 1
    assert len(requests) == 2, "retried once, not more"
    assert requests[1]["max_tokens"] == 27342 - 64
    assert "credit" in result.stderr


def test_a_budget_lowered_for_one_input_is_not_kept_for_the_next(run_seri: RunSeri) -> None:
    """The room an overflow leaves is the room beside that one input: the next request (a new
    task, a summarizer call) goes out with the configured budget again, not with a few hundred
    tokens that would cut its answer off."""
    near_full = {
        "error": {
            "code": 400,
            "message": (
                "This endpoint's maximum context length is 8000 tokens. However, you requested "
                "about 17600 tokens (7600 of text input, 10000 in the output). Please reduce "
                "the length of either one."
            ),
        }
    }
    script = [{"status": 400, "body": near_full}, {"text": "fits"}, {"text": "next"}]
    with FakeModel(script) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", input="a long task\na short question\n", env=env)
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fits\nnext\n"
    assert [r.get("max_tokens") for r in requests] == [None, 8000 - 7600 - 64, None]
