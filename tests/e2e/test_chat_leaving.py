"""Starting and leaving in a real terminal (tmux): `seri` alone is a chat, and leaving says
how to come back, as Claude Code does."""

from __future__ import annotations

import re
import socket
import threading
import time
from pathlib import Path

from scripts.fake_model import FakeModel
from seri import __version__
from tests.e2e.test_golden_terminal import _env, check_golden
from tests.tmux_terminal import TmuxTerminal


def test_golden_seri_alone_chats_clear_names_the_old_session_once_and_ctrl_d_says_how_to_resume(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    with FakeModel([{"text": "First."}, {"text": "Second."}]) as fake:
        terminal = TmuxTerminal(project, _env(seri_home, fake), ())
        terminals.append(terminal)
        terminal.wait_for(f"seri {__version__} · ")
        terminal.wait_for_prompt()
        terminal.line("one")
        terminal.wait_for("First.")
        terminal.wait_for_prompt(2)
        terminal.line("/clear")
        terminal.wait_for_prompt(3)
        terminal.line("two")
        terminal.wait_for("Second.")
        terminal.wait_for_prompt(4)
        terminal.keys("C-d")
        status = terminal.exit_status()
        said = "seri: to go on with this session: "
        screen = terminal.wait_for(said)
    # Up to seri's last line: below it tmux may or may not have drawn "Pane is dead" yet.
    screen = screen[: screen.index("\n", screen.index(said)) + 1]
    assert status == 0
    first, second = re.findall(r"new session ([0-9a-f]{32})", screen)
    assert screen.count(first) == 2  # opened, and named once by /clear (was: twice)
    assert f"seri: to go on with this session: seri chat --resume {second}" in screen
    check_golden("seri_alone_clear_and_leave", screen, project)


def test_ctrl_d_while_the_session_still_opens_behind_the_prompt_leaves_at_once(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    """The provider never answers GET /models, so the opening behind the prompt waits for
    the window (up to 10 s); Ctrl-D stops that wait and lets the opening end before seri
    does (tests/unit/terminal/test_chat_opening.py), without making leaving slow."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()

    class Silent:
        base_url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"

    try:
        terminal = TmuxTerminal(project, _env(seri_home, Silent()), ())  # type: ignore[arg-type]
        terminals.append(terminal)
        terminal.wait_for_prompt()
        time.sleep(0.5)  # the opening is under way, its window lookup unanswered
        began = time.monotonic()
        terminal.keys("C-d")
        status = terminal.exit_status()
        took = time.monotonic() - began
    finally:
        listener.close()
        for connection in held:
            connection.close()
    assert status == 0
    assert took < 5.0, f"leaving took {took:.1f} s"
