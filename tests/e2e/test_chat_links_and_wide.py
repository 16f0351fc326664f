"""Links in answers and wide characters on a narrow terminal (issue 26).

A Markdown link is shown as its text and URL where the terminal's support for OSC 8
hyperlinks is not known (tmux), as a hyperlink where it is; a line of CJK or emoji is
broken by the columns it takes (two per wide character), under its indent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import seri_env
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_chat_narrow import edited_at_sixty_columns
from tests.e2e.test_golden_terminal import _env, _open, check_golden
from tests.e2e.test_interactive import Terminal
from tests.tmux_terminal import TmuxTerminal

ANSWER = (
    "See [the docs](https://example.com/docs), or [`add`](src/add.py).\n\n"
    "| tool | where |\n| --- | --- |\n| seri | [home](https://example.com/seri) |\n"
)


def test_golden_links_show_their_url_where_hyperlinks_are_unknown(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    with FakeModel([{"text": ANSWER}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("links?")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
        coloured = terminal.coloured()
    assert "See the docs (https://example.com/docs), or add (src/add.py)." in screen
    assert "home (https://example.com/seri)" in screen  # in the table rich drew
    assert "](" not in screen
    assert "\x1b[4mthe docs" in coloured  # the link's text underlined
    check_golden("links_with_their_url", screen, project)


def test_a_terminal_known_to_support_hyperlinks_gets_osc_8(project: Path, seri_home: Path) -> None:
    with FakeModel([{"text": ANSWER}]) as fake:
        env = seri_env(seri_home, {**chat_env(fake), "TERM": "xterm-256color"})
        env.pop("NO_COLOR", None)
        terminal = Terminal(["chat", "-p", "links?"], project, {**env, "FORCE_HYPERLINK": "1"})
        terminal.expect("add")
        status = terminal.wait()
    shown = terminal.output
    assert status == 0
    assert "\x1b]8;;https://example.com/docs\x1b\\\x1b[4mthe docs\x1b[0m\x1b]8;;\x1b\\" in shown
    assert "https://example.com/docs)" not in shown
    # A path is no web address: its text and where it points, as without hyperlinks.
    assert "add\x1b[0m\x1b[2m (src/add.py)" in shown
    # The link in the table, as rich makes it (with an id parameter).
    assert re.search(r"\x1b\]8;[^;\x1b]*;https://example\.com/seri\x1b\\", shown)


def test_golden_wide_characters_wrap_by_columns_under_their_indent(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    (project / "app.py").write_text("x = 1\n")
    wide = "x = '" + "漢字" * 30 + "🎉👨‍👩‍👧' # é\n"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("e1", "edit", path="app.py", old_string="x = 1\n", new_string=wide)]},
        {"text": "Done."},
    ]
    screen = edited_at_sixty_columns(project, seri_home, terminals, script, "widen it")
    lines = screen.splitlines()
    added = next(i for i, line in enumerate(lines) if line.startswith("  +x = '漢字"))
    # Every piece of the + line goes on under its text, none at column 0.
    assert lines[added + 1].startswith("   漢字")
    assert lines[added + 2].startswith("   ")
    assert (project / "app.py").read_text() == wide
    check_golden("wide_characters_sixty_columns", screen, project)
