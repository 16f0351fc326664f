"""seri chat in a 60-column terminal (tmux): long lines go on under their own indent, and
the bottom bar keeps /help and Ctrl-D quit whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from seri import __version__
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import APPROVAL, _env, check_golden
from tests.tmux_terminal import TmuxTerminal


def test_golden_sixty_columns_wrap_with_the_indent(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    long = "    return 'a greeting that is much longer than sixty columns, ' + name\n"
    (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call(
                    "e1",
                    "edit",
                    path="app.py",
                    old_string="    return 'hi ' + name\n",
                    new_string=long,
                )
            ]
        },
        {"text": "Longer now."},
    ]
    with FakeModel(script) as fake:
        terminal = TmuxTerminal(project, _env(seri_home, fake), ("chat",), columns=60)
        terminals.append(terminal)
        terminal.wait_for(f"seri {__version__} · ")
        terminal.wait_for_prompt()
        terminal.line("make it longer")
        terminal.wait_for(APPROVAL)
        terminal.keys("Enter")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
    lines = screen.splitlines()
    added = next(i for i, line in enumerate(lines) if line.startswith("  +    return 'a greeting"))
    assert lines[added + 1].startswith("   ")  # the rest of the + line, under its text
    menu = next(i for i, line in enumerate(lines) if line.startswith("  1 yes · 2 always"))
    assert lines[menu + 1].startswith("  ")
    assert lines[-1].rstrip().endswith("│ /help · Ctrl-D quit")
    assert all(len(line) <= 60 for line in lines)
    check_golden("sixty_columns", screen, project)
