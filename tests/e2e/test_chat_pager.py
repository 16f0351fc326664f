"""Long output on a terminal goes through a pager (issue 26): /last and /diff in the chat,
`seri sessions show`; short output and output that is not a terminal never do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import _env, _open, check_golden
from tests.terminal_programs import require_program
from tests.tmux_terminal import TmuxTerminal


def test_golden_a_long_last_opens_the_pager_and_q_comes_back_to_the_prompt(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    require_program("less")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("b1", "bash", command="seq 1 300")]},
        {"text": "Counted."},
    ]
    with FakeModel(script) as fake:
        # LESS as a person's might be (none set: seri sets FRX); a prompt to wait for.
        env = _env(seri_home, fake, SERI_PAGER="less", LESS="RX", LESSSECURE="1")
        terminal = _open(terminals, project, env, "--allow", "bash(seq *)")
        terminal.line("count")
        terminal.wait_for("Counted.")
        terminal.wait_for_prompt(2)
        terminal.line("/last")
        terminal.wait_for("\n:")  # less: a screenful, then its prompt
        paged = terminal.screen()
        terminal.type("q")
        terminal.wait_for_prompt(3)
    rows = paged.splitlines()
    assert rows[0] == "── #1 bash seq 1 300" and rows[1] == "1"
    assert "300" not in rows  # the rest is a keypress away, not scrolled past
    check_golden("long_last_paged", paged, project)


def test_short_output_and_a_pipe_are_never_paged_sessions_show_on_a_terminal_is(
    run_seri: RunSeri, project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    marking = {"SERI_PAGER": "sed s/^/PAGED:/"}  # a "pager" whose every line says so
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("b1", "bash", command="seq 1 3")]},
        {"text": "Counted."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(
            terminals, project, _env(seri_home, fake, **marking), "--allow", "bash(seq *)"
        )
        terminal.line("count")
        terminal.wait_for_prompt(2)
        terminal.line("/last")  # three lines: shown in place
        terminal.wait_for_prompt(3)
        chat_screen = terminal.history()
        terminal.keys("C-d")
        terminal.exit_status()
        env = {**_env(seri_home, fake), **marking}
    session_id = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"]
    piped = run_seri("sessions", "show", session_id, env=marking)
    shown = TmuxTerminal(project, env, ("sessions", "show", session_id))
    terminals.append(shown)
    shown.wait_for("PAGED:[4] assistant")
    assert "── #1 bash seq 1 3" in chat_screen and "PAGED:" not in chat_screen
    assert piped.returncode == 0 and "PAGED:" not in piped.stdout
    assert f"session    {session_id}" in piped.stdout


def test_the_pager_is_chosen_as_git_chooses_it() -> None:
    from seri.io.terminal.pager import pager_command

    assert pager_command({}) == ["less"]
    assert pager_command({"PAGER": "most -s"}) == ["most", "-s"]
    assert pager_command({"PAGER": "more", "SERI_PAGER": "less -S"}) == ["less", "-S"]
    assert pager_command({"PAGER": "cat"}) is None
    assert pager_command({"PAGER": "less", "SERI_PAGER": ""}) is None
    assert pager_command({"PAGER": "less 'unclosed"}) is None
