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


def test_without_an_output_budget_it_is_an_overflow(run_seri: RunSeri) -> None:
    with FakeModel([{"status": 400, "body": OVERFLOW}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", "-p", "hi", env=env)
    assert result.returncode == 1
    assert "overflow" in result.stderr
