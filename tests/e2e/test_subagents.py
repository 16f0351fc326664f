"""The `task` tool end to end (issue 6, point 5): a child agent with its own context and its
own budget of 25 turns (config `subagent_max_turns`), read-only tools unless the parent's
policy allows more, one level deep, its answer as the tool result, its messages stored as a
child session, its model calls in the parent's run.

The fake model serves its steps in order, and a child runs inside its parent's tool call, so
a script reads top to bottom: the parent's call of `task`, the child's turns, the parent again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from seri.runtime.agent.subagent import CHILD_PREAMBLE
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env


def _task(id_: str, prompt: str, description: str = "look around") -> dict[str, Any]:
    return {"tool_calls": [call(id_, "task", description=description, prompt=prompt)]}


def _glob(id_: str) -> dict[str, Any]:
    return {"tool_calls": [call(id_, "glob", pattern="*")]}


def _tools(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


def _is_child(body: dict[str, Any]) -> bool:
    return CHILD_PREAMBLE in body["messages"][0]["content"]


def _only_session(run_seri: RunSeri) -> str:
    lines = run_seri("sessions", "--json").stdout.splitlines()
    assert len(lines) == 1, lines
    return str(json.loads(lines[0])["id"])


def _write_config(home: Path, **config: Any) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps(config))


def test_the_child_has_its_own_budget_not_the_parents(run_seri: RunSeri) -> None:
    # The parent may take 2 turns; the child takes 6, within its own default of 25.
    script = [
        _task("t1", "Count the files, slowly."),
        *[_glob(f"g{i}") for i in range(5)],
        {"text": "There are no files."},
        {"text": "The subagent says there are no files."},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat",
            "--max-turns",
            "2",
            "--allow",
            "task",
            "-p",
            "count files",
            env=chat_env(fake),
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The subagent says there are no files.\n"
    assert [_is_child(r) for r in requests] == [False, *[True] * 6, False]
    # Its own context: the child starts from the prompt alone, not the parent's history.
    child_first = requests[1]["messages"]
    assert [m["role"] for m in child_first] == ["system", "user"]
    assert child_first[1]["content"] == "Count the files, slowly."
    # Its final answer is the task tool's result in the parent's conversation.
    result_message = requests[-1]["messages"][-1]
    assert result_message["role"] == "tool" and result_message["tool_call_id"] == "t1"
    assert "There are no files." in result_message["content"]


def test_a_child_out_of_turns_returns_what_it_has_with_a_note(
    run_seri: RunSeri, seri_home: Path
) -> None:
    _write_config(seri_home, subagent_max_turns=3)
    script = [
        _task("t1", "Search forever."),
        {"text": "Still looking, found a.txt so far.", **_glob("g1")},
        _glob("g2"),
        _glob("g3"),
        {"text": "The child ran out; here is what it found."},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "task", "-p", "search", env=chat_env(fake))
        requests = fake.requests
        left = fake.remaining
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert left == 0
    # Exactly 3 child turns (the config), then the parent again.
    assert [_is_child(r) for r in requests] == [False, True, True, True, False]
    note = requests[-1]["messages"][-1]
    assert note["role"] == "tool"
    assert "Not finished" in note["content"] and "3" in note["content"]
    assert "turns" in note["content"]
    assert "found a.txt so far" in note["content"]


def test_no_grandchildren_and_read_only_tools(run_seri: RunSeri, project: Path) -> None:
    script = [
        _task("t1", "Try to delegate and to write."),
        {
            "tool_calls": [
                call("c1", "task", description="deeper", prompt="grandchild"),
                call("c2", "write_file", path="x.txt", content="no"),
                call("c3", "bash", command="touch y.txt"),
            ]
        },
        {"text": "I could do neither."},
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "task", "-p", "go", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert len(requests) == 4
    parent, child = requests[0], requests[1]
    assert "task" in _tools(parent)
    # The child is not even offered the task tool, nor anything that writes.
    assert _tools(child) == {"read_file", "glob", "grep"}
    results = {
        m["tool_call_id"]: m["content"] for m in requests[2]["messages"] if m["role"] == "tool"
    }
    assert results["c1"].startswith("not run: unknown tool 'task'")
    assert results["c2"].startswith("not run: unknown tool 'write_file'")
    assert results["c3"].startswith("not run: unknown tool 'bash'")
    assert not (project / "x.txt").exists() and not (project / "y.txt").exists()
    # Only one child: the grandchild never started.
    assert sum(_is_child(r) for r in requests) == 2


def test_the_parents_policy_can_give_the_child_more(run_seri: RunSeri, project: Path) -> None:
    (project / "notes.txt").write_bytes(b"before\n")
    script = [
        _task("t1", "Rewrite notes.txt."),
        {"tool_calls": [call("c1", "write_file", path="notes.txt", content="after\n")]},
        {"tool_calls": [call("c2", "write_file", path="other.txt", content="no\n")]},
        {"text": "Rewrote notes.txt."},
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat",
            "--allow",
            "task",
            "--allow",
            "write_file(notes.txt)",
            "-p",
            "go",
            env=chat_env(fake),
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert _tools(requests[1]) == {"read_file", "glob", "grep", "write_file"}
    assert (project / "notes.txt").read_bytes() == b"after\n"
    # Outside what the rules allow, the child is denied: no one can be asked.
    assert not (project / "other.txt").exists()
    denied = requests[3]["messages"][-1]
    assert denied["role"] == "tool" and denied["content"].startswith("denied")

    # The child's write is checkpointed under the parent's message: its rewind undoes it.
    parent_id = _only_session(run_seri)
    listed = run_seri("rewind", "--session", parent_id, "--list", "--json").stdout
    assert [json.loads(line)["files"] for line in listed.splitlines()] == [["notes.txt"]]
    back = run_seri("rewind", "--session", parent_id, "--to", "1", "--files")
    assert back.returncode == 0, back.stderr
    assert (project / "notes.txt").read_bytes() == b"before\n"


def test_the_child_is_stored_and_counted_in_the_parents_run(run_seri: RunSeri) -> None:
    script = [
        _task("t1", "Look.", description="first look"),
        _glob("g1"),
        {"text": "child answer", "usage": {"prompt_tokens": 1000, "completion_tokens": 7}},
        {"text": "parent answer", "usage": {"prompt_tokens": 2000, "completion_tokens": 11}},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "task", "-p", "look", env=chat_env(fake))
        calls = len(fake.requests)
    assert result.returncode == 0, result.stderr
    parent_id = _only_session(run_seri)  # the child is not listed as a session of its own

    shown = run_seri("sessions", "show", parent_id, "--json").stdout.splitlines()
    head = json.loads(shown[0])
    assert len(head["children"]) == 1
    child_id = head["children"][0]
    child = run_seri("sessions", "show", child_id, "--json").stdout.splitlines()
    child_head = json.loads(child[0])
    assert child_head["parent"] == parent_id
    child_messages = [json.loads(line) for line in child[1:]]
    assert [m["role"] for m in child_messages] == ["user", "assistant", "tool", "assistant"]
    assert child_messages[0]["text"] == "Look."
    assert child_messages[-1]["text"] == "child answer"

    export = run_seri("trajectory", "export", "--session", parent_id)
    assert export.returncode == 0, export.stderr
    events = [json.loads(line) for line in export.stdout.splitlines()]
    runs = {e["run"] for e in events}
    assert len(runs) == 1
    model_calls = [e for e in events if e["type"] == "model_call"]
    assert len(model_calls) == calls == 4
    assert all(e["session"] == parent_id for e in events)
    inputs = sorted(e["usage"]["input_tokens"] for e in model_calls)
    assert inputs[-2:] == [1000, 2000]
    assert any(e["type"] == "subagent_start" and e["child"] == child_id for e in events)


def test_the_child_works_under_the_projects_instructions(run_seri: RunSeri, project: Path) -> None:
    (project / "AGENTS.md").write_text("Never touch the vendor directory.\n")
    script = [_task("t1", "Summarize."), {"text": "child done"}, {"text": "parent done"}]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "task", "-p", "go", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    child = [body for body in requests if _is_child(body)]
    assert child
    assert "Never touch the vendor directory." in child[0]["messages"][0]["content"]


def test_a_child_task_too_big_for_the_window_is_refused_and_leaves_no_child(
    run_seri: RunSeri, seri_home: Path
) -> None:
    """A task prompt a child could never send (review-1 N2): the call's result says why, the
    parent goes on, and no empty child session is left behind."""
    _write_config(seri_home, context_window=16_384)
    script = [
        _task("t1", "summarize this: " + "word " * 4_000),
        {"text": "parent answer"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "task", "-p", "look", env=chat_env(fake))
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert len(requests) == 2 and not any(_is_child(body) for body in requests)
    told = requests[1]["messages"][-1]["content"]
    assert "Not finished" in told and "the prompt is too big for this model's window" in told
    shown = run_seri("sessions", "show", _only_session(run_seri), "--json").stdout.splitlines()
    assert json.loads(shown[0])["children"] == []
