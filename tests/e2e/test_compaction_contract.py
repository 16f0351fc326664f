"""The compaction contract on the installed seri against the loopback model (an 8k window the
fake enforces, its summarizer answering by itself): a compaction is announced (event,
stream-json line, chat line) before the summarizer is called, then its outcome; with
`compaction.auto: false` nothing compacts by itself and an overflow fails the turn with advice,
while `seri compact` still works; the task in hand and the goal come through every compaction
verbatim (the ledger says so) and a --continue goes on toward the goal; each ledger entry
says what the compaction cost, and /cost, `sessions show` and the result record show it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env

WINDOW = 8_192


def configure(seri_home: Path, **extra: Any) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"context_window": WINDOW, **extra}))


def reads(project: Path, count: int = 12, lines: int = 60) -> list[dict[str, Any]]:
    for n in range(count):
        (project / f"f{n}.txt").write_text(f"file {n}\n" + "the quick brown fox\n" * lines)
    return [{"tool_calls": [call(f"r{n}", "read_file", path=f"f{n}.txt")]} for n in range(count)]


def fake(script: list[dict[str, Any]]) -> FakeModel:
    return FakeModel(
        script, context_length=WINDOW, enforce_context=True, token_ratio=1, auto_recap=True
    )


def lines_of(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def head_of(run_seri: RunSeri, session: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    shown = run_seri("sessions", "show", session, "--json").stdout.splitlines()
    return json.loads(shown[0]), [json.loads(line) for line in shown[1:]]


def test_a_compaction_is_announced_before_the_summarizer_is_called(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    configure(seri_home)
    with fake([*reads(project), {"text": "read them all"}]) as model:
        done = run_seri(
            "chat",
            "-p",
            "read the files",
            "--output-format",
            "stream-json",
            env=chat_env(model),
        )
    assert done.returncode == 0, done.stderr
    types = [line["type"] for line in lines_of(done)]
    start = types.index("compaction_start")
    assert start < types.index("summary_call") < types.index("compaction")
    announced = lines_of(done)[start]
    assert announced["trigger"] == "auto" and announced["evicting"] >= 4
    assert announced["context_window"] == WINDOW
    # ... and in words, before its outcome.
    said = done.stderr
    assert "seri: compacting (auto): about " in said
    assert said.index("seri: compacting (auto)") < said.index("seri: compacted: ")


def test_auto_off_never_compacts_and_an_overflow_says_what_to_do(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    configure(seri_home, compaction={"auto": False})
    with fake([*reads(project, count=30), {"text": "read them all"}]) as model:
        done = run_seri(
            "chat", "-p", "read the files", "--output-format", "json", env=chat_env(model)
        )
        summaries = [body for body in model.requests if "tools" not in body]
    record = lines_of(done)[-1]
    assert (done.returncode, record["status"]) == (1, "overflow"), done.stderr
    assert "compaction.auto is false" in record["error"] and "/compact" in record["error"]
    assert "seri handoff --session" in record["error"]
    assert summaries == [] and "compacting" not in done.stderr
    head, _ = head_of(run_seri, record["session"])
    assert head["compactions"] == []
    # Asked for, it still compacts.
    with fake([]) as model:
        asked = run_seri("compact", "--session", record["session"], env=chat_env(model))
    assert asked.returncode == 0, asked.stderr
    head, _ = head_of(run_seri, record["session"])
    assert [entry["trigger"] for entry in head["compactions"]] == ["shell"]


def test_the_task_and_the_goal_survive_compaction_and_a_continue(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    configure(seri_home)
    task = "TASK-7: read every file, then write done.txt"
    check = "test -f done.txt"
    pin = f"The goal (done when `{check}` exits 0): {task}"
    with fake([*reads(project), {"text": "read them all"}]) as model:
        first = run_seri(
            "chat",
            "-p",
            task,
            "--until",
            check,
            "--max-checks",
            "1",
            "--output-format",
            "json",
            env=chat_env(model),
        )
    record = lines_of(first)[-1]
    assert (first.returncode, record["status"]) == (4, "max_checks"), first.stderr
    session = record["session"]
    head, messages = head_of(run_seri, session)
    entries = head["compactions"]
    marks = [(e["task_kept"], e["goal_kept"]) for e in entries]
    assert marks and set(marks) == {(True, True)}, marks
    recap = next(m for m in messages if m.get("kind") == "recap")["text"]
    assert pin in recap
    assert f"## The task in hand (the newest message, kept verbatim)\n{task}" in recap
    # What it cost, in the ledger and the result record.
    entry = entries[0]
    assert entry["summary_input_tokens"] > 0 and entry["summary_output_tokens"] > 0
    assert entry["cache_rewrite_tokens"] > 0
    assert record["compactions"]["count"] == len(entries)
    assert record["compactions"]["summary_input_tokens"] == sum(
        e["summary_input_tokens"] for e in entries
    )
    shown = run_seri("sessions", "show", session).stdout
    assert "CACHE REWRITE" in shown and "task yes, goal yes" in shown
    # --continue goes on toward the open goal: the model sees it in the recap and the check's
    # failure as its task; the goal is met this time.
    steps = [{"tool_calls": [call("w", "write_file", path="done.txt", content="ok")]}]
    with fake([*steps, {"text": "wrote it"}]) as model:
        again = run_seri(
            "chat",
            "--continue",
            "-p",
            "go on",
            "--allow",
            "write_file",
            "--output-format",
            "json",
            env=chat_env(model),
        )
        first_request = model.requests[0]["messages"]
    record = lines_of(again)[-1]
    assert (again.returncode, record["status"]) == (0, "done"), again.stderr
    assert record["goal"]["status"] == "done" and record["goal"]["text"] == task
    assert any(pin in json.dumps(m) for m in first_request)


def test_cost_shows_what_compactions_cost(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    configure(seri_home)
    with fake([*reads(project), {"text": "read them all"}]) as model:
        first = run_seri("chat", "-p", "read the files", env=chat_env(model))
        assert first.returncode == 0, first.stderr
        shown = run_seri("chat", "--continue", input="/cost\n", env=chat_env(model))
    head, _ = head_of(run_seri, json.loads(run_seri("sessions", "--json").stdout)["id"])
    count = len(head["compactions"])
    assert count >= 1
    assert f"compactions:  {count}: the summarizer read " in shown.stderr + shown.stdout
    assert "tokens written to the cache again" in shown.stderr + shown.stdout
