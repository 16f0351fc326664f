"""Agent Skills in a chat, end to end against the loopback fake model: the catalogue in the
frozen prompt, activation by the model's tool call and by ``/name args``, the activated skill
carried verbatim through a compaction, a malformed skill that does not stop the others.

The skill is anthropics/skills' webapp-testing, unchanged (tests/third_party/skills)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import chat_env
from tests.inprocess import Ran, run_seri_here

PUBLIC = Path(__file__).parent.parent / "third_party" / "skills" / "webapp-testing"
BODY_LINE = "To test local web applications, write native Python Playwright scripts."


def _activate(id_: str, **arguments: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": id_, "name": "activate_skill", "arguments": arguments}]}


def _install(home: Path) -> None:
    shutil.copytree(PUBLIC, home / "skills" / "webapp-testing")


def _tools(body: dict[str, Any]) -> dict[str, Any]:
    return {t["function"]["name"]: t["function"] for t in body.get("tools", [])}


def test_the_model_activates_a_skill_and_it_survives_compaction(
    run_seri: RunSeri, seri_home: Path
) -> None:
    _install(seri_home)
    broken = seri_home / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text("---\nname: broken\n---\nno description\n")
    (seri_home / "config.json").write_text(json.dumps({"compaction": {"keep_tokens": 40}}))
    script: list[dict[str, Any]] = [
        _activate("s1", name="webapp-testing"),
        _activate("s2", name="webapp-testing", file="LICENSE.txt"),
        {"text": "one " + "x" * 300},
        {"text": "two " + "y" * 300},
        {"text": "three " + "z" * 300},
        {"text": '{"goal": "g", "progress": [], "blockers": [], "next_steps": []}'},
        {"text": "four"},
    ]
    with FakeModel(script) as fake:
        done = run_seri(
            "chat", input="test the app\ntwo\nthree\n/compact\nfour\n", env=chat_env(fake)
        )
        requests = fake.requests
    assert done.returncode == 0, done.stderr
    assert "skill" in done.stderr and "broken" in done.stderr and "no description" in done.stderr
    system = requests[0]["messages"][0]["content"]
    assert "<available_skills>" in system and "- webapp-testing: Toolkit for" in system
    assert "broken" not in system
    tool = _tools(requests[0])["activate_skill"]
    assert tool["parameters"]["properties"]["name"]["enum"] == ["webapp-testing"]
    results = [m["content"] for m in requests[2]["messages"] if m["role"] == "tool"]
    assert results[0].startswith("[skill webapp-testing]") and BODY_LINE in results[0]
    assert "examples/console_logging.py" in results[0]
    assert "Apache License" in results[1]
    # Compacted: the activation's messages are gone, its content rides in the recap verbatim.
    last = requests[-1]["messages"]
    assert all(m["role"] != "tool" for m in last)
    recap = next(m["content"] for m in last if "[skill webapp-testing]" in str(m["content"]))
    assert results[0].strip() in recap
    # The frozen prompt is the same in every turn's request (the summarizer's has its own).
    turns = [r for r in requests if "tools" in r]
    assert len(turns) == 6 and all(r["messages"][0]["content"] == system for r in turns)


def test_a_slash_command_is_a_skill(run_seri: RunSeri, seri_home: Path) -> None:
    _install(seri_home)
    with FakeModel([{"text": "tested"}]) as fake:
        done = run_seri("chat", input="/webapp-testing the login page\n", env=chat_env(fake))
        requests = fake.requests
    assert done.returncode == 0, done.stderr
    asked = requests[0]["messages"][-1]
    assert asked["role"] == "user" and asked["content"].startswith("[skill webapp-testing]")
    assert BODY_LINE in asked["content"] and "the login page" in asked["content"]
    assert "tested" in done.stdout


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_slash_command_given_to_p_is_the_skill_too(
    run_seri: RunSeri, seri_home: Path, output_format: str
) -> None:
    """`seri chat -p "/name args"` runs the skill as the chat does (Claude Code's `-p
    "/command"`); a slash word that names no skill goes to the model as written."""
    _install(seri_home)
    with FakeModel([{"text": "tested"}, {"text": "as written"}]) as fake:
        done = run_seri(
            "chat", "--output-format", output_format, "-p", "/webapp-testing the login page",
            env=chat_env(fake),
        )  # fmt: skip
        plain = run_seri("chat", "-p", "/no-such-skill here", env=chat_env(fake))
        requests = fake.requests
    assert done.returncode == 0, done.stderr
    asked = requests[0]["messages"][-1]
    assert asked["role"] == "user" and asked["content"].startswith("[skill webapp-testing]")
    assert BODY_LINE in asked["content"] and "the login page" in asked["content"]
    assert "tested" in done.stdout
    assert plain.returncode == 0, plain.stderr
    assert requests[1]["messages"][-1]["content"] == "/no-such-skill here"


def test_a_project_skill_loads_only_once_approved(run_seri: RunSeri, project: Path) -> None:
    shutil.copytree(PUBLIC, project / ".claude" / "skills" / "webapp-testing")
    with FakeModel([{"text": "ok"}]) as fake:
        before = run_seri("chat", "-p", "hi", env=chat_env(fake))
        system = fake.requests[0]["messages"][0]["content"]
    assert "webapp-testing" not in system and "activate_skill" not in _tools(fake.requests[0])
    assert "seri skills approve webapp-testing" in before.stderr, before.stderr
    assert run_seri("skills", "approve").returncode == 0
    with FakeModel([{"text": "ok"}]) as fake:
        after = run_seri("chat", "-p", "hi", env=chat_env(fake))
        system = fake.requests[0]["messages"][0]["content"]
    assert after.returncode == 0 and "- webapp-testing: Toolkit for" in system


def _here(home: Path, project: Path, fake: FakeModel | None, *argv: str, stdin: str = "") -> Ran:
    """``seri ARGV`` in this process (tests/inprocess.py): the whole command, real HTTP."""
    env = {"SERI_HOME": str(home), "SERI_MODEL": "fake/model", "SERI_PAGER": "cat"}
    if fake is not None:
        env.update(chat_env(fake))
    return run_seri_here(argv, env=env, cwd=project, stdin=stdin)


def _compaction(home: Path, project: Path, session_id: str) -> dict[str, Any]:
    shown = _here(home, project, None, "sessions", "show", session_id, "--json")
    assert shown.code == 0, shown.stderr
    [entry] = json.loads(shown.stdout.splitlines()[0])["compactions"]
    return {k: v for k, v in entry.items() if k not in ("trigger", "at", "seconds")}


def test_seri_compact_sizes_a_session_with_skills_as_its_chat_does(
    seri_home: Path, project: Path, tmp_path: Path
) -> None:
    """`seri compact` counts the frozen prompt the chat sends, the skills' catalogue (and
    their activation tool) included: the same session compacted from the chat (/compact) and
    from the shell is sized and cut the same (it was sized without them, a smaller
    estimate than the chat's, so a cut near the keep budget fell elsewhere)."""
    _install(seri_home)
    (seri_home / "config.json").write_text(
        json.dumps({"context_window": 16_000, "compaction": {"keep_tokens": 300}})
    )
    recap = {"text": '{"goal": "g", "progress": [], "blockers": [], "next_steps": []}'}
    lines = "".join(f"task {n}: " + "look at the parser " * 40 + "\n" for n in range(6))
    with FakeModel([{"text": f"seen {n} " + "w" * 400} for n in range(6)]) as fake:
        built = _here(seri_home, project, fake, "chat", stdin=lines)
    assert built.code == 0, built.stderr
    listed = _here(seri_home, project, None, "sessions", "--json").stdout
    session_id = json.loads(listed.splitlines()[0])["id"]
    shell_home = tmp_path / "shell-profile"
    shutil.copytree(seri_home, shell_home)
    with FakeModel([recap]) as fake:
        chat = _here(seri_home, project, fake, "chat", "--resume", session_id, stdin="/compact\n")
    assert chat.code == 0, chat.stderr
    with FakeModel([recap]) as fake:
        shell = _here(shell_home, project, fake, "compact", "--session", session_id)
    assert shell.code == 0, shell.stderr
    by_chat = _compaction(seri_home, project, session_id)
    by_shell = _compaction(shell_home, project, session_id)
    assert by_chat["evicted"] > 0
    assert by_shell == by_chat
