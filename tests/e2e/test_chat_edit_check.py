"""An edit the file already refuses (its old_string is not there) fails at once: nobody
is asked to approve a call that changes nothing, and the model gets the tool's error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_golden_terminal import APPROVAL, _env, _open, check_golden
from tests.tmux_terminal import TmuxTerminal


def _tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_golden_an_edit_that_will_fail_is_not_asked_about(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    (project / "app.py").write_text("x = 1\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("e1", "edit", path="app.py", old_string="y = 2", new_string="y")]},
        {"tool_calls": [call("e2", "edit", path="app.py", old_string="x = 1", new_string="x = 2")]},
        {"text": "Fixed on the second try."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("bump x")
        terminal.wait_for(APPROVAL)  # the second edit, which can apply, is asked about
        terminal.keys("Enter")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
        requests = list(fake.requests)
    assert screen.count(APPROVAL) == 1
    assert "this edit will fail" not in screen
    assert _tool_results(requests[1])[0].startswith("old_string not found in app.py")
    assert (project / "app.py").read_text() == "x = 2\n"
    check_golden("failing_edit_not_asked", screen, project)


def test_a_file_the_model_may_not_read_is_not_checked_for_it(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    """The check would tell the model whether a text is in the file: only for files
    read_file may read. Elsewhere the call is asked about (here, with no one to ask, denied)."""
    seri_home.mkdir(parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(
        json.dumps({"permissions": {"deny": ["read_file(secret.txt)"]}})
    )
    (project / "secret.txt").write_text("token\n")
    (project / "open.txt").write_text("a\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("e1", "edit", path="secret.txt", old_string="guess", new_string="x"),
                call("e2", "edit", path="open.txt", old_string="zz", new_string="y"),
            ]
        },
        {"text": "ok"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "-p", "go", env=chat_env(fake))
        secret, opened = _tool_results(fake.requests[1])
    assert result.returncode == 0
    assert secret.startswith("denied by policy: edit(secret.txt) needs approval")
    assert opened.startswith("old_string not found in open.txt")
