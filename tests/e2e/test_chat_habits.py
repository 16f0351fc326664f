"""Habits from Claude Code and Codex in a real terminal (tmux): `!cmd`, `@file`, the `/`
menu, `/init`, and `/model` checked against the server's list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import APPROVAL, _env, _open, _user_messages, check_golden
from tests.tmux_terminal import TmuxTerminal


def test_golden_bang_runs_a_command_under_the_rules_and_at_attaches_a_file(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"permissions": {"deny": ["bash(rm *)"]}}))
    (project / "notes.txt").write_text("buy milk\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('hi')\n")
    with FakeModel([{"text": "It prints hi."}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("!ls; echo $OPENROUTER_API_KEY end")
        terminal.wait_for_prompt(2)
        terminal.line("!rm notes.txt")
        terminal.wait_for_prompt(3)
        terminal.type("what does @sr")
        terminal.wait_for(" src/")  # the menu
        terminal.keys("Tab")
        terminal.wait_for("@src/")
        terminal.type("ap")
        terminal.wait_for(" src/app.py")
        terminal.keys("Tab")
        terminal.wait_for("@src/app.py")
        terminal.type(" print?")
        terminal.keys("Enter")
        terminal.wait_for("It prints hi.")
        terminal.wait_for_prompt(4)
        screen = terminal.history()
        asked = _user_messages(fake.requests[0])[-1]
    assert "notes.txt\nsrc\nend" in screen  # ls ran; the key is not in its environment
    assert "seri: not run: denied by rule bash(rm *)" in screen
    assert (project / "notes.txt").exists()
    assert (
        asked == "what does @src/app.py print?\n\n<file path=\"src/app.py\">\nprint('hi')\n</file>"
    )
    assert len(fake.requests) == 1  # neither ! line went to the model
    check_golden("bang_and_at", screen, project)


def test_golden_slash_menu_init_and_a_model_typo(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    (project / "Makefile").write_text("test:\n\tpytest -q\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("r1", "read_file", path="Makefile")]},
        {
            "tool_calls": [
                call("w1", "write_file", path="AGENTS.md", content="# Agents\n\nTest: make test\n")
            ]
        },
        {"text": "Wrote AGENTS.md."},
    ]
    with FakeModel(script, models=("fake/model", "fake/other")) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.type("/")
        menu = terminal.wait_for("write AGENTS.md for this project")
        terminal.type("ini")
        terminal.wait_for("/init ")
        terminal.keys("Enter")  # picks /init from the menu
        terminal.keys("Enter")  # sends it
        terminal.wait_for(APPROVAL)
        terminal.keys("Enter")
        terminal.wait_for_prompt(2)
        terminal.line("/model fake/othr")
        terminal.wait_for_prompt(3)
        terminal.line("/model fake/other")
        terminal.wait_for_prompt(4)
        screen = terminal.history()
        init_task = _user_messages(fake.requests[0])[-1]
    assert "/compact [focus words]" in menu and "/diff [PATH]" in menu
    assert init_task.startswith("Write AGENTS.md at the root of this project")
    assert (project / "AGENTS.md").read_text().startswith("# Agents")
    assert "seri: fake/othr is not among the 2 models the server lists; did you mean" in screen
    assert "model: fake/other for the rest of this run" in screen
    check_golden("menu_init_model", screen, project)


def test_at_completion_lists_only_the_project(tmp_path: Path) -> None:
    """``@`` completes names inside the project, never a sibling whose name starts like it."""
    from seri.runtime.terminal.prompt_completer import _project_paths

    project, sibling = tmp_path / "proj", tmp_path / "proj-other"
    (project / "src").mkdir(parents=True)
    (project / "notes.txt").write_text("x\n")
    sibling.mkdir()
    (sibling / "secret.txt").write_text("x\n")
    assert _project_paths(str(project), "") == [("src", True), ("notes.txt", False)]
    assert _project_paths(str(project), "src/") == []
    assert _project_paths(str(project), "../proj-other/") == []
    assert _project_paths(str(project), "../") == []
