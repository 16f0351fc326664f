"""Compaction's own budgets: the summarizer's answer room, and windows no recap can help.

Real-world misses (issue 25): with ``sampling.max_tokens: 200`` and an 8k llama.cpp slot the
one summarizer call stopped at 200 tokens and the compaction failed; the person's cap is for
answers, not for seri's bookkeeping. And when an overflow answer stated a window smaller than
the system prompt and the tools (llama.cpp ``n_ctx: 256``), seri rewrote the history with
eight summarizer calls before saying nothing could fit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env


def _reads(project: Path, count: int, lines: int) -> list[dict[str, Any]]:
    for n in range(count):
        (project / f"f{n}.txt").write_text(f"file {n}\n" + "the quick brown fox\n" * lines)
    return [{"tool_calls": [call(f"r{n}", "read_file", path=f"f{n}.txt")]} for n in range(count)]


def test_the_summarizer_answers_with_its_own_budget_not_the_persons_max_tokens(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True)
    config = {"context_window": 8_192, "sampling": {"max_tokens": 200}}
    (seri_home / "config.json").write_text(json.dumps(config))
    script = [*_reads(project, 8, 40), {"text": "read them all"}]
    with FakeModel(
        script,
        context_length=8_192,
        enforce_context=True,
        token_ratio=1,
        overflow_style="llamacpp",
        auto_recap=True,
    ) as fake:
        ran = run_seri("chat", "-p", "read the files", env=chat_env(fake))
        compacted = run_seri("chat", "--continue", input="/compact\n", env=chat_env(fake))
        requests = list(fake.requests)
    assert ran.returncode == 0, ran.stderr
    assert compacted.returncode == 0, compacted.stderr
    summaries = [body for body in requests if "tools" not in body]
    turns = [body for body in requests if "tools" in body]
    assert summaries, "nothing was summarized"
    # The answers the person asked for keep their cap; the recap gets the window's answer room.
    assert {body.get("max_tokens") for body in turns} == {200}
    assert {body.get("max_tokens") for body in summaries} == {8_192 // 8}


def test_a_window_smaller_than_the_system_prompt_is_said_before_any_summarizer_call(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": 8_192}))
    script = [*_reads(project, 6, 30), {"text": "read"}, {"text": "never reached"}]
    with FakeModel(
        script, context_length=8_192, enforce_context=True, token_ratio=1, auto_recap=True
    ) as fake:
        first = run_seri("chat", "-p", "read the files", env=chat_env(fake))
    assert first.returncode == 0, first.stderr
    # The same model now runs in a llama.cpp slot of n_ctx 256.
    with FakeModel(
        script[-1:],
        context_length=256,
        enforce_context=True,
        token_ratio=1,
        overflow_style="llamacpp",
        auto_recap=True,
    ) as small:
        second = run_seri("chat", "--continue", "-p", "go on", env=chat_env(small))
        requests = list(small.requests)
    assert second.returncode == 1
    assert "system prompt and the tool definitions alone take about" in second.stderr
    assert "of the 256 tokens" in second.stderr
    assert [body for body in requests if "tools" not in body] == [], "a summarizer was paid"
    assert len(requests) == 1, "only the refused turn request"


def _import(seri_home: Path, session: str, lines: list[dict[str, Any]]) -> None:
    (seri_home / "sessions").mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    (seri_home / "sessions" / f"{session}.jsonl").write_text(text, encoding="utf-8")


def _exchanges(count: int, size: int) -> list[dict[str, Any]]:
    lines: list[dict[str, Any]] = []
    for n in range(count):
        lines.append({"role": "user", "content": f"step {n}: " + "describe the plan " * size})
        lines.append({"role": "assistant", "content": [{"type": "text", "text": "ok " * size}]})
    return lines


def test_seri_compact_sizes_with_the_prompt_the_chat_sends_not_the_imported_one(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    """An imported session's own 25,585-character system prompt is never sent by a chat (a
    chat freezes seri's own at its start): `seri compact` at 8k sizes with seri's, and
    compacts, instead of saying the prompt alone fills the window."""
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": 8_000}))
    header = {
        "id": "imported-codex",
        "cwd": str(project),
        "systemPrompt": "You are Codex, a coding agent. " * 825,
        "permissionMode": "auto",
    }
    _import(seri_home, "imported-codex", [header, *_exchanges(12, 40)])
    with FakeModel(
        [], context_length=8_000, enforce_context=True, token_ratio=1, auto_recap=True
    ) as fake:
        compacted = run_seri("compact", "--session", "imported-codex", env=chat_env(fake))
        summaries = [body for body in fake.requests if "tools" not in body]
    assert compacted.returncode == 0, compacted.stderr
    assert "alone take" not in compacted.stderr
    assert summaries and fake.refused == 0


def test_a_compact_that_does_not_make_the_session_fit_says_so_once(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    """User and assistant text never give way: a /compact that writes the recap but still
    leaves the newest exchange over the window's half is one failure, not "compacted: 58k →
    3.7k" followed by "compaction failed"; the trajectory records it as what it was."""
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": 8_000}))
    header = {"id": "talk", "cwd": str(project), "systemPrompt": "", "permissionMode": "auto"}
    lines = [*_exchanges(10, 100), {"role": "user", "content": "why? " * 2_400}]
    _import(seri_home, "talk", [header, *lines])
    with FakeModel(
        [], context_length=8_000, enforce_context=True, token_ratio=1, auto_recap=True
    ) as fake:
        ran = run_seri("chat", "--resume", "talk", input="/compact\n", env=chat_env(fake))
        exported = run_seri("trajectory", "export", "--session", "talk", env=chat_env(fake))
    assert "compacted:" not in ran.stderr
    [failure] = [line for line in ran.stderr.splitlines() if "compaction failed" in line]
    assert "the recap was written" in failure and "does not fit" in failure
    records = [json.loads(line) for line in exported.stdout.splitlines()]
    [compaction] = [r for r in records if r["type"] == "compaction"]
    assert "does not fit" in compaction["still_too_big"]
