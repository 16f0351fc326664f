"""seri chat in a 60-column terminal (tmux): long lines go on under their own indent, and
the bottom bar keeps /help and Ctrl-D quit whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call
from tests.e2e.test_golden_terminal import APPROVAL, _env, _open, check_golden
from tests.faults.support import chat_env
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


PROSE = (
    "The answer streams in pieces of three characters, so most pieces end inside a word, "
    "and the terminal is only sixty columns wide.\n\n"
    "- a list item whose text is far too long for one line goes on under its text\n"
    "12. a numbered item that is long enough to need a second line, 漢字 included\n"
)


def test_golden_an_answer_wraps_by_words_and_a_list_under_its_text(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    with FakeModel([{"text": PROSE, "piece_chars": 3}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake), columns=60)
        terminal.line("explain")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("The answer streams"))
    paragraph = " ".join(lines[start : start + 3])
    assert paragraph.split() == PROSE.split("\n", 1)[0].split()  # broken between words only
    bullet = next(i for i, line in enumerate(lines) if line.startswith("• a list item"))
    assert lines[bullet + 1].startswith("  ") and not lines[bullet + 1][2].isspace()
    number = next(i for i, line in enumerate(lines) if line.startswith("12. a numbered"))
    assert lines[number + 1].startswith("    ") and not lines[number + 1][4].isspace()
    assert all(len(line) <= 60 for line in lines)
    check_golden("answer_prose_sixty_columns", screen, project)


def test_a_piped_answer_is_the_models_text_unwrapped(run_seri: RunSeri) -> None:
    with FakeModel([{"text": PROSE, "piece_chars": 3}]) as fake:
        result = run_seri("chat", "-p", "explain", env={**chat_env(fake), "COLUMNS": "60"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == PROSE


# The second paragraph comes well after the first (the spaces between are held and never
# shown), so the window is narrowed while the answer streams, before its lines are drawn.
FIRST = "A first paragraph drawn at sixty columns, ending at the word MARK."
SECOND = (
    "The second paragraph arrives after the window was narrowed to forty columns, "
    "and its lines are broken between words at forty."
)


def test_a_resize_mid_answer_wraps_the_next_lines_at_the_new_width(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    text = FIRST + " " * 100 + "\n\n" + SECOND + "\n"
    step = {"text": text, "piece_chars": 20, "split_bytes": 50, "drip_interval": 0.05}
    with FakeModel([step]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake), columns=60)
        terminal.line("explain")
        terminal.wait_for("MARK.")
        terminal.resize(40)
        terminal.wait_for("seri>", 2)
        lines = terminal.history().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("The second paragraph"))
    end = next(i for i, line in enumerate(lines) if line.endswith("at forty."))
    assert " ".join(lines[start : end + 1]).split() == SECOND.split()  # seri broke them
    assert all(len(line) <= 40 for line in lines[start : end + 1])
