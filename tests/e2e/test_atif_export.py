"""`seri trajectory export --format atif` read back by the independent `atif` package (PyPI,
pydantic models of ATIF v1.8, not ours): real sessions of the corpus as imported, and live
runs against the loopback fake with tools, denials, a subagent, a compaction and a resume.

Every document must validate; and each carries what it should (the tests name it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from atif import Trajectory

from scripts.fake_model import FakeModel
from tests.e2e.test_compaction_windows import Seri, llama_slot, real_lines

REAL_SESSIONS = ("real-cc-meridian", "real-gemini-teams", "real-mini-django")


def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": id_, "name": name, "arguments": arguments}


def atif_documents(seri: Seri, *session: str) -> list[dict[str, Any]]:
    argv = ["trajectory", "export", "--format", "atif"]
    if session:
        argv += ["--session", session[0]]
    ran = seri(*argv)
    assert ran.code == 0, ran.stderr
    documents = [json.loads(line) for line in ran.stdout.splitlines()]
    for document in documents:
        Trajectory.model_validate(document)  # raises on anything ATIF v1.8 forbids
        _check_harbor_rules(document)
    return documents


def _check_harbor_rules(document: dict[str, Any]) -> None:
    """What Harbor's own model adds to the atif package's: at least one step, everywhere."""
    assert document["steps"], document["trajectory_id"]
    for child in document.get("subagent_trajectories", ()):
        _check_harbor_rules(child)


def steps_of(document: dict[str, Any], source: str) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step["source"] == source]


@pytest.mark.parametrize("name", REAL_SESSIONS)
def test_a_real_imported_session_is_one_valid_document(tmp_path: Path, name: str) -> None:
    lines = real_lines(name)
    seri = Seri(tmp_path, 200_000)
    session_id = seri.import_session(lines)
    with FakeModel() as fake:
        seri.fake = fake
        _, stored = seri.show(session_id)  # imports it (export only ever reads)
        [document] = atif_documents(seri, session_id)
    assert document["session_id"] == document["trajectory_id"] == session_id
    assert document["extra"]["recorded"] is False
    assert document["agent"]["name"] == "seri" and document["agent"]["extra"]["imported"]
    # Every stored message is in the document: a person's as a user step, an answer as an
    # agent step, a tool message as the result of the call it answers.
    users = [m for m in stored if m["role"] == "user" and not m.get("kind")]
    answers = [m for m in stored if m["role"] == "assistant"]
    results = [m for m in stored if m["role"] == "tool"]
    assert len(steps_of(document, "user")) == len(users)
    assert len(steps_of(document, "agent")) == len(answers)
    observed = [
        result
        for step in document["steps"]
        for result in (step.get("observation") or {}).get("results", [])
    ]
    assert len(observed) == len(results)
    assert {r["source_call_id"] for r in observed if "source_call_id" in r} <= {
        call["tool_call_id"]
        for step in steps_of(document, "agent")
        for call in step.get("tool_calls", [])
    }
    assert all("metrics" not in step for step in document["steps"])


def test_a_live_run_with_tools_a_denial_and_a_subagent(tmp_path: Path) -> None:
    seri = Seri(tmp_path, 200_000)
    script = [
        {
            "reasoning": "write it, then tidy up",
            "tool_calls": [
                call("c1", "write_file", path="a.py", content="print(1)\n"),
                call("c2", "bash", command="rm -rf build"),
            ],
        },
        {"tool_calls": [call("t1", "task", description="look", prompt="list the files")]},
        {"tool_calls": [call("g1", "glob", pattern="*")]},
        {"text": "one file: a.py"},
        {"text": "Done: a.py written.", "usage": {"cost": 0.002}},
    ]
    with FakeModel(script) as fake:
        seri.fake = fake
        ran = seri("chat", "--allow", "write_file", "--allow", "task", "-p", "write a.py")
        assert ran.code == 0, ran.stderr
        [document] = atif_documents(seri)
        listed = json.loads(seri("sessions", "--json").stdout)
    session_id = listed["id"]
    assert document["session_id"] == session_id and document["extra"]["recorded"] is True
    assert document["agent"]["version"] and document["agent"]["model_name"] == "fake/model"
    assert document["agent"]["extra"]["base_url"] == fake.base_url  # the header, whole
    user, first, second, last = document["steps"]
    assert user["source"] == "user" and user["message"] == "write a.py"
    assert first["reasoning_content"] == "write it, then tidy up"
    assert [c["arguments"] for c in first["tool_calls"]] == [
        {"path": "a.py", "content": "print(1)\n"},
        {"command": "rm -rf build"},
    ]
    written, denied = first["observation"]["results"]
    assert written["content"] == "Created a.py (9 bytes)."
    assert written["extra"]["edit"]["outcome"] == "applied" and written["extra"]["ok"] is True
    assert denied["extra"]["denial"]["by"] == "policy"
    assert denied["content"].startswith("denied by policy")
    assert first["metrics"]["prompt_tokens"] > 0 and first["llm_call_count"] == 1
    # The subagent: embedded, named by the task call's result, its calls in the totals.
    [task_result] = second["observation"]["results"]
    [child] = document["subagent_trajectories"]
    assert task_result["subagent_trajectory_ref"] == [
        {"trajectory_id": child["trajectory_id"], "session_id": session_id}
    ]
    assert [s["source"] for s in child["steps"]] == ["user", "agent", "agent"]
    assert child["steps"][0]["message"] == "list the files"
    assert child["steps"][1]["observation"]["results"][0]["content"] == "a.py"
    assert last["message"] == "Done: a.py written." and last["metrics"]["cost_usd"] == 0.002
    final = document["final_metrics"]
    agent_steps = [s for s in [first, second, last, *child["steps"]] if s["source"] == "agent"]
    assert final["total_prompt_tokens"] == sum(s["metrics"]["prompt_tokens"] for s in agent_steps)
    assert final["extra"]["calls"] == 5 and final["extra"]["status"] == "done"


def test_a_compaction_and_a_resume_chain_the_runs(tmp_path: Path) -> None:
    """An imported real session compacted from the shell, then resumed: three documents
    (the imported messages, the compaction's run, the resumed run), chained in order."""
    seri = Seri(tmp_path, 16_000)
    session_id = seri.import_session(real_lines("real-mini-django"))
    with llama_slot() as fake:
        seri.fake = fake
        seri.show(session_id)
        assert seri("compact", "--session", session_id).code == 0
        fake.add_steps({"tool_calls": [call("r1", "read_file", path="missing.py")]})
        fake.add_steps({"text": "Nothing to read."})
        assert seri("chat", "--resume", session_id, "-p", "read missing.py").code == 0
        documents = atif_documents(seri, session_id)
        # --since keeps the documents with a record at or after the date.
        later = seri("trajectory", "export", "--format", "atif", "--since", "2999-01-01")
        earlier = seri("trajectory", "export", "--format", "atif", "--since", "2000-01-01")
        assert later.code == 0 and later.stdout == ""
        assert [json.loads(line) for line in earlier.stdout.splitlines()] == documents
    imported, compacted, resumed = documents
    assert [d["session_id"] for d in documents] == [session_id] * 3
    assert imported["continued_trajectory_ref"] == compacted["trajectory_id"]
    assert compacted["continued_trajectory_ref"] == resumed["trajectory_id"]
    assert "continued_trajectory_ref" not in resumed
    # The compaction is a system step with the summarizer's calls, counted in the totals; its
    # recap is a system step too. The evicted messages are no longer stored: the imported
    # document keeps only what is left.
    compaction = [s for s in compacted["steps"] if (s.get("extra") or {}).get("event")]
    assert compaction and compaction[0]["extra"]["event"] == "compaction"
    summarizer = compaction[0]["extra"]["summarizer"]
    assert summarizer["calls"] >= 1
    assert compacted["final_metrics"]["extra"]["summary_calls"] == summarizer["calls"]
    assert compacted["final_metrics"]["total_prompt_tokens"] == summarizer["prompt_tokens"]
    recaps = [s for s in compacted["steps"] if (s.get("extra") or {}).get("kind") == "recap"]
    assert len(recaps) == 1 and recaps[0]["source"] == "system"
    assert "summarizer calls" in compacted["notes"]
    # The resumed run: the task, the call and its error result, the answer.
    assert [s["source"] for s in resumed["steps"]] == ["user", "agent", "agent"]
    [read] = resumed["steps"][1]["observation"]["results"]
    assert read["source_call_id"] == "r1" and read["extra"]["is_error"] is True


def test_an_answer_evicted_by_compaction_keeps_its_recorded_calls(tmp_path: Path) -> None:
    """Runs whose messages a later compaction evicted: their agent steps stay, with the
    recorded calls, results and metrics, and say that the message is no longer stored."""
    seri = Seri(tmp_path, 16_000, compaction={"keep_tokens": 500})
    (seri.project / "notes.txt").write_text("x" * 9_000)
    with llama_slot() as fake:
        seri.fake = fake
        for task in range(4):
            fake.add_steps({"tool_calls": [call(f"n{task}", "read_file", path="notes.txt")]})
            fake.add_steps({"text": f"read it ({task})"})
            prompt = f"read notes.txt, round {task}"
            argv = ["chat", "-p", prompt] if task == 0 else ["chat", "--continue", "-p", prompt]
            assert seri(*argv).code == 0
        session_id = seri.only_session()
        assert seri("compact", "--session", session_id).code == 0
        documents = atif_documents(seri, session_id)
    first, *_, compaction = documents
    # The first run's prompt and messages were evicted: its two calls are left.
    assert [(s["source"], s["extra"]["message_stored"]) for s in first["steps"]] == [
        ("agent", False),
        ("agent", False),
    ]
    assert first["steps"][0]["tool_calls"][0]["function_name"] == "read_file"
    assert first["steps"][0]["observation"]["results"][0]["extra"]["ok"] is True
    assert first["steps"][0]["metrics"]["prompt_tokens"] > 0
    assert "no stored message" in first["notes"]
    assert [s["extra"].get("kind") or s["extra"]["event"] for s in compaction["steps"]] == [
        "recap",
        "compaction",
    ]
