"""What tool calls leave on the screen in a real terminal (tmux): diffs after "always",
/diff, a command's output live while it runs, the right count of lines not shown, and /last
showing the call its hint sat under."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import APPROVAL, _env, _open, check_golden
from tests.tmux_terminal import TmuxTerminal


def test_golden_diffs_stay_visible_after_always_and_diff_shows_the_session(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    long_before = "".join(f"line {n}\n" for n in range(40))
    (project / "long.txt").write_text(long_before)
    long_after = long_before.replace("line ", "row ")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("e1", "edit", path="app.py", old_string="'hi '", new_string="'hey '")
            ]
        },
        {
            "tool_calls": [
                call("e2", "edit", path="app.py", old_string="name\n", new_string="name.title()\n")
            ]
        },
        {"tool_calls": [call("w1", "write_file", path="long.txt", content=long_after)]},
        {"text": "Done."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake), "--allow", "write_file")
        terminal.line("tidy up")
        terminal.wait_for(APPROVAL)
        terminal.line("always")
        terminal.wait_for_prompt(2)
        terminal.line("/diff app.py")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
    # The second edit ran under "always" and still shows what it changed.
    assert "+    return 'hey ' + name.title()" in screen
    assert "  … 68 more diff lines (/diff shows the session's changes)" in screen
    # /diff: app.py from before the session's first edit to now.
    assert screen.count("-    return 'hi ' + name") == 2  # asked, then /diff
    check_golden("diff_after_always", screen, project)


def test_golden_command_output_is_live_counted_right_and_last_shows_the_cut_call(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    slow = "for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 0.4; done"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("b1", "bash", command=slow)]},
        {"tool_calls": [call("b2", "bash", command="seq 1 40000")]},
        {"tool_calls": [call("b3", "bash", command="echo after")]},
        {"text": "Counted."},
    ]
    with FakeModel(script) as fake:
        env = _env(seri_home, fake)
        terminal = _open(terminals, project, env, "--allow", "bash")
        terminal.line("count")
        live = terminal.wait_for("│ tick 2")
        running = "✓ bash  for i in" not in live  # seen while the command still ran
        terminal.wait_for_prompt(2)
        terminal.line("/last")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
    assert running
    assert "│ … 39,996 more lines (/last #2 shows them)" in screen
    assert "── #2 bash seq 1 40000" in screen  # the cut call, not the later `echo after`
    # The screen up to /last's heading (the 2,000 lines it then shows are not for a golden).
    check_golden("live_output_and_last", screen.split("── #2", 1)[0], project)


def test_a_retry_notice_gets_a_line_of_its_own_not_the_spinners(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    script: list[dict[str, Any]] = [
        {"status": 429, "headers": {"Retry-After": "1"}},
        {"text": "Answered after the retry."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("hello")
        terminal.wait_for("Answered after the retry.")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
    notice = next(line for line in screen.splitlines() if "retrying in" in line)
    assert notice.startswith("seri: ") and "Esc to interrupt" not in notice
