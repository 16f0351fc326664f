"""A long session in one process finishes: 40+ tasks of one read_file each through many
compactions, on the models that get prompt-cache markers (whose moving marker once crashed
the wire cache's pruning after the fourth compaction) and on one that does not.

One piped ``seri chat`` runs every task (each stdin line is one), against the loopback fake
answering the summarizer itself, at a 30k window so that the history is compacted every few
tasks.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri

KEY = "sk-or-v1-" + "5e6f" * 16
TASKS = 44
WINDOW = 30_000
FILE_BYTES = 6_000  # about 1,500 tokens a task: a compaction every few tasks


# Each answer in one piece: what is long here is the session, not the stream. The fake's
# default 4-character pieces in 7-byte HTTP chunks cost about two thirds of this run; the
# other e2e tests get those cut streams (and tests/unit/provider/test_provider_client.py cuts them
# anywhere).
WHOLE = {"piece_chars": 10_000, "split_bytes": 1 << 16}


def _steps() -> list[dict[str, object]]:
    steps: list[dict[str, object]] = []
    for task in range(TASKS):
        call = {"id": f"r{task}", "name": "read_file", "arguments": {"path": f"notes/{task}.txt"}}
        steps.append({"tool_calls": [call], **WHOLE})
        steps.append({"text": f"task {task} read", **WHOLE})
    return steps


def _marked(message: dict[str, object]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any("cache_control" in part for part in content)


@pytest.mark.parametrize(
    "model", ["anthropic/claude-sonnet-4.5", "google/gemini-2.5-pro", "openai/gpt-4o"]
)
def test_forty_tasks_through_many_compactions_in_one_process(
    run_seri: RunSeri, seri_home: Path, project: Path, model: str
) -> None:
    notes = project / "notes"
    notes.mkdir()
    for task in range(TASKS):
        line = f"note {task}: " + "lorem ipsum dolor sit amet " * 4 + "\n"
        (notes / f"{task}.txt").write_text((line * (FILE_BYTES // len(line) + 1))[:FILE_BYTES])
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": WINDOW}))
    prompts = "".join(f"read notes/{task}.txt\n" for task in range(TASKS))
    with FakeModel(_steps(), context_length=WINDOW, models=[model], auto_recap=True) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, "SERI_MODEL": model}
        ran = run_seri("chat", input=prompts, env=env, timeout=120)
        requests = fake.requests
        remaining = fake.remaining
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "internal error" not in ran.stderr
    assert remaining == 0, "every task's two steps were served"
    answers = [line for line in ran.stdout.splitlines() if line.startswith("task ")]
    assert answers == [f"task {task} read" for task in range(TASKS)]
    summaries = [body for body in requests if "tools" not in body]
    assert len(summaries) >= 5, f"only {len(summaries)} compactions"
    turns = [body for body in requests if "tools" in body]
    marked = [sum(map(_marked, body["messages"])) for body in turns]
    if model.startswith("openai/"):
        assert set(marked) == {0}
    else:
        assert set(marked) == {2}, "the system prompt and the moving end, on every call"
