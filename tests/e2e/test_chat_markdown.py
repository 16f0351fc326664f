"""An answer's Markdown in a real terminal (tmux): a table drawn, code highlighted,
*italics* in italics; rich is loaded only for an answer that has such a block."""

from __future__ import annotations

from pathlib import Path

from scripts.fake_model import FakeModel
from tests.e2e.test_golden_terminal import _env, _open, check_golden
from tests.tmux_terminal import TmuxTerminal

ANSWER = (
    "Two options, *roughly* equal:\n\n"
    "| option | cost |\n|---|---|\n| cache | low |\n| rewrite | high |\n\n"
    "```python\ndef cached(key):\n    return store.get(key)\n```\n"
    "Pick **cache**.\n"
)


def test_golden_a_table_and_code_are_drawn(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    with FakeModel([{"text": ANSWER, "piece_chars": 5}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("which one?")
        terminal.wait_for("Pick cache.")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
        coloured = terminal.coloured()
    assert "|---|" not in screen and "| cache | low |" not in screen  # drawn, not raw
    assert "cache" in screen and "rewrite" in screen and "────" in screen
    assert "```" not in screen and "def cached(key):" in screen
    assert "\x1b[3mroughly" in coloured  # italics
    assert "\x1b[38;5;" in coloured  # Pygments' colours on the code
    check_golden("markdown_table_and_code", screen, project)
