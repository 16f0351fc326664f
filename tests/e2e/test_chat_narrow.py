"""seri chat in a 60-column terminal (tmux): long lines go on under their own indent, and
the bottom bar keeps /help and Ctrl-D quit whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import APPROVAL, _env, _open, check_golden
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
    screen = edited_at_sixty_columns(project, seri_home, terminals, script, "make it longer")
    lines = screen.splitlines()
    added = next(i for i, line in enumerate(lines) if line.startswith("  +    return 'a greeting"))
    assert lines[added + 1].startswith("   ")  # the rest of the + line, under its text
    menu = next(i for i, line in enumerate(lines) if line.startswith("  1 yes · 2 always"))
    assert lines[menu + 1].startswith("  ")
    assert lines[-1].rstrip().endswith("│ /help · Ctrl-D quit")
    assert all(len(line) <= 60 for line in lines)
    check_golden("sixty_columns", screen, project)


def edited_at_sixty_columns(
    project: Path,
    seri_home: Path,
    terminals: list[TmuxTerminal],
    script: list[dict[str, Any]],
    words: str,
) -> str:
    """The whole screen of a 60-column chat where ``words`` get an edit, asked about and
    allowed, and its answer."""
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake), columns=60)
        terminal.line(words)
        terminal.wait_for(APPROVAL)
        terminal.keys("Enter")
        terminal.wait_for_prompt(2)
        return terminal.history()
