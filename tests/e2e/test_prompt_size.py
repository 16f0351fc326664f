"""A prompt too big for the window is refused before it is stored (review-1, N2).

Before, ``seri chat -p -`` with 200,000 characters at a 16k window stored the prompt, was
refused by the provider, and every later ``--continue`` failed the same way: no cut (fewer than
four messages) and nothing the shrink ladder could shrink. The installed `seri` runs against
the loopback fake, which refuses what is over its window in llama.cpp's words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import chat_env

WINDOW = 16_384
HUGE = "word " * 40_000 + "\n"


def _slot(script: list[dict[str, Any]]) -> FakeModel:
    return FakeModel(script, context_length=WINDOW, enforce_context=True, overflow_style="llamacpp")


def _config(seri_home: Path) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": WINDOW}))


def _sessions(run_seri: RunSeri) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run_seri("sessions", "--json").stdout.splitlines()]


def test_a_prompt_bigger_than_the_window_is_refused_and_the_session_goes_on(
    run_seri: RunSeri, seri_home: Path
) -> None:
    _config(seri_home)
    script: list[dict[str, Any]] = [{"text": "hello back"}, {"text": "still here"}]
    with _slot(script) as fake:
        # A new session: refused, nothing stored, no empty session left behind.
        fresh = run_seri("chat", "-p", "-", input=HUGE, env=chat_env(fake))
        assert fresh.returncode == 2, fresh.stderr
        assert _sessions(run_seri) == []
        first = run_seri("chat", "-p", "hello", env=chat_env(fake))
        assert first.returncode == 0, first.stderr
        # An existing session: refused, the session as it was.
        refused = run_seri("chat", "--continue", "-p", "-", input=HUGE, env=chat_env(fake))
        after = run_seri("chat", "--continue", "-p", "are you there?", env=chat_env(fake))
        calls = len(fake.requests)
    assert refused.returncode == 2, refused.stderr
    line = refused.stderr.strip().splitlines()[-1]
    assert line.startswith("seri: the prompt is too big for this model's window: 200,001 ")
    assert f"of the window's {WINDOW:,} tokens" in line
    assert "nothing was stored" in line and "read that file" in line
    assert after.returncode == 0, after.stderr
    assert after.stdout == "still here\n"
    assert calls == 2  # the refused prompts never reached the provider
    (session,) = _sessions(run_seri)
    assert session["messages"] == 4


def test_a_refused_line_in_a_scripted_chat_does_not_stop_the_next(
    run_seri: RunSeri, seri_home: Path
) -> None:
    _config(seri_home)
    with _slot([{"text": "first"}, {"text": "third"}]) as fake:
        result = run_seri("chat", input=f"one\n{HUGE.strip()}\nthree\n", env=chat_env(fake))
    assert result.stdout == "first\nthird\n"
    assert "the prompt is too big" in result.stderr
    assert result.returncode == 0, result.stderr


def test_a_refused_prompt_ends_a_json_run_in_one_error_result_with_exit_2(
    run_seri: RunSeri, seri_home: Path
) -> None:
    _config(seri_home)
    with _slot([{"text": "unused"}]) as fake:
        for fmt in ("json", "stream-json"):
            run = run_seri(
                "chat", "-p", "-", "--output-format", fmt, input=HUGE, env=chat_env(fake)
            )
            assert run.returncode == 2, run.stderr
            records = [json.loads(line) for line in run.stdout.splitlines()]
            results = [r for r in records if r.get("type") == "result"]
            assert len(results) == 1 and records[-1] is results[0]
            assert results[0]["status"] == "error" and results[0]["exit_status"] == 2
            assert "too big for this model's window" in results[0]["error"]
        assert fake.requests == []
    assert _sessions(run_seri) == []
