"""Rules that fire and memory writes, end to end (issue 6, points 6 and 7).

The system prompt is frozen at session start: AGENTS.md, always-on rules and memory files are
read once. What arrives later arrives as a message: a rule whose `globs:` match a path a tool
touched (once per session, also after a resume), while an approved memory write waits for the
next start of seri.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from seri.io.inputs.prompt_files import MEMORY_CAP_BYTES, global_memory_file, project_memory_file
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env

RULE_BODY = "Python files carry type hints on every function."
ALWAYS_BODY = "Indent with tabs, never spaces."


def _rules(project: Path) -> None:
    rules = project / ".seri" / "rules"
    rules.mkdir(parents=True)
    (rules / "always.md").write_text(f"{ALWAYS_BODY}\n")
    (rules / "python.md").write_text(
        f'---\ndescription: Python style\nglobs: ["src/**/*.py", "*.py"]\n---\n{RULE_BODY}\n'
    )
    (rules / "docs.md").write_text("---\nglobs:\n  - docs/**\n---\nDocs are in British English.\n")


def _rule_messages(body: dict[str, Any]) -> list[str]:
    return [
        m["content"]
        for m in body["messages"]
        if m["role"] == "user"
        and isinstance(m.get("content"), str)
        and m["content"].startswith("[rule ")
    ]


def _system(body: dict[str, Any]) -> str:
    first = body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_a_glob_rule_fires_once_as_a_message(run_seri: RunSeri, project: Path) -> None:
    _rules(project)
    (project / "README.md").write_text("hello\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("r1", "read_file", path="README.md")]},
        {
            "tool_calls": [
                call("w1", "write_file", path="src/pkg/a.py", content="x = 1\n"),
                call("g1", "glob", pattern="**/*"),
            ]
        },
        {"tool_calls": [call("e1", "edit", path="src/pkg/a.py", old_string="1", new_string="2")]},
        {"text": "first done"},
        {"tool_calls": [call("w2", "write_file", path="b.py", content="y = 1\n")]},
        {"text": "second done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat",
            "--allow",
            "write_file",
            "--allow",
            "edit",
            input="one\ntwo\n",
            env=chat_env(fake),
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    assert len(requests) == 6
    # Always-on rules are in the frozen prompt; glob rules are not, and it never changes.
    systems = {_system(r) for r in requests}
    assert len(systems) == 1
    system = systems.pop()
    assert ALWAYS_BODY in system
    assert RULE_BODY not in system and "British" not in system
    # Not yet after reading README.md; right after the results of the write that matched.
    assert _rule_messages(requests[1]) == []
    after_write = requests[2]["messages"]
    assert [m["role"] for m in after_write[-4:]] == ["assistant", "tool", "tool", "user"]
    assert after_write[-1]["content"].startswith("[rule python]")
    assert RULE_BODY in after_write[-1]["content"]
    # Once only: not again for the edit of the same file, nor for another .py in a later task.
    assert len(_rule_messages(requests[-1])) == 1

    # Once per session, also after a resume.
    script = [
        {"tool_calls": [call("w3", "write_file", path="c.py", content="z = 1\n")]},
        {"text": "third done"},
    ]
    with FakeModel(script) as fake:
        resumed = run_seri(
            "chat", "--continue", "--allow", "write_file", "-p", "three", env=chat_env(fake)
        )
        requests = fake.requests
    assert resumed.returncode == 0, resumed.stderr
    assert len(_rule_messages(requests[-1])) == 1
    assert _system(requests[-1]) == system

    # A new session is a new count: it fires there again, with the YAML-list rule too.
    script = [
        {
            "tool_calls": [
                call("w4", "write_file", path="d.py", content="w = 1\n"),
                call("w5", "write_file", path="docs/intro.md", content="Colour\n"),
            ]
        },
        {"text": "fourth done"},
    ]
    with FakeModel(script) as fake:
        fresh = run_seri("chat", "--allow", "write_file", "-p", "four", env=chat_env(fake))
        requests = fake.requests
    assert fresh.returncode == 0, fresh.stderr
    fired = _rule_messages(requests[-1])
    assert sorted(text.split("]")[0] for text in fired) == ["[rule docs", "[rule python"]


def test_a_rule_does_not_fire_again_after_a_compaction_and_a_resume(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    _rules(project)
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(json.dumps({"compaction": {"keep_tokens": 40}}))
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "write_file", path="a.py", content="x = 1\n")]},
        {"text": "one " + "x" * 300},
        {"text": "two " + "y" * 300},
        {"text": "three " + "z" * 300},
        {"text": '{"goal": "g", "progress": [], "blockers": [], "next_steps": []}'},
    ]
    with FakeModel(script) as fake:
        first = run_seri(
            "chat",
            "--allow",
            "write_file",
            input="one\ntwo\nthree\n/compact\n",
            env=chat_env(fake),
        )
    assert "compacted: " in first.stderr, first.stderr
    script = [
        {"tool_calls": [call("w2", "write_file", path="b.py", content="y = 1\n")]},
        {"text": "four"},
    ]
    with FakeModel(script) as fake:
        run_seri("chat", "--continue", "--allow", "write_file", "-p", "four", env=chat_env(fake))
        requests = fake.requests
    assert _rule_messages(requests[-1]) == []
    # The rule's message was evicted, but its text rides along in the recap: still in force.
    recap = next(m["content"] for m in requests[-1]["messages"] if "Recap" in str(m["content"]))
    assert "[rule python]" in recap


def test_rules_are_the_persons_to_write_and_wait_for_the_next_session(
    run_seri: RunSeri, project: Path
) -> None:
    """The model cannot write a rule (.seri/ is protected: a rule steers every later
    session, README: Sandbox); one the person writes is read by the next session."""
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call(
                    "w1",
                    "write_file",
                    path=".seri/rules/late.md",
                    content="Late rule: answer in haiku.\n",
                )
            ]
        },
        {"text": "could not write a rule"},
        {"text": "second"},
    ]
    with FakeModel(script) as fake:
        run_seri("chat", "--allow", "write_file", input="one\ntwo\n", env=chat_env(fake))
        requests = fake.requests
    refused = next(m for m in requests[1]["messages"] if m["role"] == "tool")["content"]
    assert "never allowed" in refused and not (project / ".seri").exists(), refused
    (project / ".seri" / "rules").mkdir(parents=True)
    (project / ".seri" / "rules" / "late.md").write_text("Late rule: answer in haiku.\n")
    assert all("haiku" not in _system(r) for r in requests)
    with FakeModel([{"text": "ok"}]) as fake:
        run_seri("chat", "-p", "new session", env=chat_env(fake))
        requests = fake.requests
    assert "Late rule: answer in haiku." in _system(requests[0])


def _remember(id_: str, text: str, scope: str) -> dict[str, Any]:
    return {"tool_calls": [call(id_, "remember", text=text, scope=scope)]}


def _pending(run_seri: RunSeri) -> list[dict[str, Any]]:
    listed = run_seri("memory", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    return [json.loads(line) for line in listed.stdout.splitlines()]


def test_a_memory_write_enters_the_prompt_only_at_the_next_start(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    fact = "The user's test command is `make check`."
    script: list[dict[str, Any]] = [
        _remember("m1", fact, "project"),
        {"text": "I asked to remember that."},
        {"text": "second task done"},
    ]
    with FakeModel(script) as fake:
        result = run_seri(
            "chat",
            "--allow",
            "remember",
            input="remember the test command\n/memory pending\n/memory approve 1\ndo more\n",
            env=chat_env(fake),
        )
        requests = fake.requests
    assert result.returncode == 0, result.stderr
    staged = requests[1]["messages"][-1]
    assert staged["role"] == "tool" and "approve" in staged["content"]
    assert "make check" in result.stdout + result.stderr  # /memory pending listed it
    memory_file = project_memory_file(seri_home, str(project))
    # Written at once on approval...
    assert fact in memory_file.read_text()
    # ...but not into this session's prompt, which stays as it started.
    assert len({_system(r) for r in requests}) == 1
    assert all("make check" not in _system(r) for r in requests)
    assert _pending(run_seri) == []

    # The next start reads it: a resumed session and a new one alike.
    with FakeModel([{"text": "a"}, {"text": "b"}]) as fake:
        run_seri("chat", "--continue", "-p", "again", env=chat_env(fake))
        run_seri("chat", "-p", "new", env=chat_env(fake))
        requests = fake.requests
    assert all(fact in _system(r) for r in requests)


def test_nothing_is_written_until_approved_and_the_shell_forms(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    script: list[dict[str, Any]] = [
        _remember("m1", "Prefers pytest over unittest.", "global"),
        _remember("m2", "Deploys with fly.io.", "project"),
        {"text": "staged two"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "remember", "-p", "note these", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    global_file = global_memory_file(seri_home)
    project_file = project_memory_file(seri_home, str(project))
    assert not global_file.exists() and not project_file.exists()

    entries = _pending(run_seri)
    assert [(e["n"], e["scope"], e["text"]) for e in entries] == [
        (1, "global", "Prefers pytest over unittest."),
        (2, "project", "Deploys with fly.io."),
    ]
    rejected = run_seri("memory", "reject", "2")
    assert rejected.returncode == 0, rejected.stderr
    approved = run_seri("memory", "approve", "1")
    assert approved.returncode == 0, approved.stderr
    assert "next time" in approved.stderr
    assert "Prefers pytest over unittest." in global_file.read_text()
    assert not project_file.exists()
    assert _pending(run_seri) == []
    missing = run_seri("memory", "approve", "2")
    assert missing.returncode == 2
    assert "no staged memory entry 2" in missing.stderr


def test_a_write_past_the_cap_fails_and_asks_to_consolidate(
    run_seri: RunSeri, seri_home: Path
) -> None:
    global_file = global_memory_file(seri_home)
    global_file.parent.mkdir(parents=True)
    full = ("- an old memory line\n" * (MEMORY_CAP_BYTES // 21)).encode()
    assert len(full) <= MEMORY_CAP_BYTES
    global_file.write_bytes(full)
    script = [_remember("m1", "One more fact that does not fit. " * 3, "global"), {"text": "ok"}]
    with FakeModel(script) as fake:
        scripted = run_seri(
            "chat",
            "--allow",
            "remember",
            input="remember\n/memory approve 1\n",
            env=chat_env(fake),
        )
        staged = fake.requests[1]["messages"][-1]["content"]
    assert "approve" in staged
    assert scripted.returncode != 0
    assert "consolidate" in scripted.stderr
    assert global_file.read_bytes() == full
    refused = run_seri("memory", "approve", "1")
    assert refused.returncode != 0
    assert "consolidate" in refused.stderr
    assert global_file.read_bytes() == full
    assert [e["n"] for e in _pending(run_seri)] == [1]


def test_rule_files_and_fired_names() -> None:
    """The rule parsing the tests above rely on, and the names a resume reads back."""
    from seri.pure.agent.rules import (
        RULES_FIRED_KEY,
        GlobRule,
        fired_rule_names,
        glob_rules,
        parse_rule,
    )
    from seri.pure.session.records import Message

    flow = parse_rule("a", "---\nglobs: [\"src/**/*.py\", '*.toml']\n---\nBody A\n")
    csv = parse_rule("b", "---\nglobs: docs/**, *.md\n---\nBody B")
    block = parse_rule("c", "---\nglobs:\n  - 'tests/**'\n  - \"*.cfg\"\nname: x\n---\nBody C")
    plain = parse_rule("d", "No front matter at all.\n")
    described = parse_rule("e", "---\ndescription: always\n---\nBody E")
    assert flow.globs == ("src/**/*.py", "*.toml") and flow.text == "Body A"
    assert csv.globs == ("docs/**", "*.md")
    assert block.globs == ("tests/**", "*.cfg") and block.text == "Body C"
    assert plain.globs == () and plain.text == "No front matter at all."
    assert described.globs == () and described.text == "Body E"
    rules = glob_rules([flow, csv, block, plain, described])
    assert [r.name for r in rules] == ["a", "b", "c"]
    assert rules[0].matches("src/pkg/deep/m.py") and not rules[0].matches("lib/m.py")

    fired = Message(role="user", text=GlobRule("a", ("*",), "x").message_text(), kind="rule")
    typed = Message(role="user", text="[rule b] typed by a person, not a rule message")
    assert fired_rule_names([fired, typed]) == {"a"}
    assert fired_rule_names([fired], {"goal": "g", RULES_FIRED_KEY: ["c"]}) == {"a", "c"}
