"""Answering an approval in a real terminal (tmux): what people type is understood."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import APPROVAL, _env, _open, check_golden
from tests.tmux_terminal import TmuxTerminal


def test_golden_ok_sure_enter_and_a_number_answer_and_noise_is_asked_again(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "write_file", path="a.txt", content="a\n")]},
        {"tool_calls": [call("w2", "write_file", path="b.txt", content="b\n")]},
        {"tool_calls": [call("w3", "write_file", path="c.txt", content="c\n")]},
        {"tool_calls": [call("b1", "bash", command="touch d.txt")]},
        {"tool_calls": [call("b2", "bash", command="touch e.txt")]},
        {"text": "Four files."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("make five files")
        terminal.wait_for(APPROVAL)
        terminal.line("ok")
        terminal.wait_for(APPROVAL, 2)
        terminal.line("Sure!")
        terminal.wait_for(APPROVAL, 3)
        terminal.line("hmm")
        terminal.wait_for("not a choice")
        terminal.wait_for(APPROVAL, 4)  # asked again
        terminal.keys("Enter")  # the default shown: yes
        terminal.wait_for(APPROVAL, 5)
        terminal.line("1")
        terminal.wait_for(APPROVAL, 6)
        terminal.line("3 skip e, four is enough")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
        denied = fake.requests[5]["messages"][-1]["content"]
    assert [p.name for p in sorted(project.iterdir())] == ["a.txt", "b.txt", "c.txt", "d.txt"]
    assert denied == "denied by user: skip e, four is enough"
    check_golden("approval_answers", screen, project)
