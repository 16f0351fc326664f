"""Opening a chat behind the prompt (seri/runtime/terminal/chat_opening.py), and leaving
while it opens: the opening stops waiting for the model's window and ends, so that the
session is closed like any other and no thread of seri's is left importing as the
interpreter shuts down (a daemon thread importing then crashed `-p` runs with SIGSEGV)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seri.io.session.store import open_store
from seri.io.terminal.terminal import Screen
from seri.pure.inputs.settings import Settings
from seri.runtime.session.profile import Profile
from seri.runtime.terminal.chat_opening import LOOKUP_WAIT, ChatOpener
from seri.runtime.terminal.chat_options import ChatOptions


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A provider that takes every connection and never answers: GET /models hangs."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    listener.close()
    for connection in held:
        connection.close()


def _opener(tmp_path: Path, base_url: str) -> ChatOpener:
    root, project = tmp_path / "profile", tmp_path / "project"
    root.mkdir()
    project.mkdir()
    profile = Profile(str(root), open_store(root))
    # No window in the settings: the opening asks the server for it.
    settings = Settings(model="fake/model", base_url=base_url)
    return ChatOpener(profile, str(project), ChatOptions(), settings, Screen())


def test_leaving_while_the_window_is_awaited_ends_the_opening_at_once(
    tmp_path: Path, silent_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-" + "cd34" * 16)
    monkeypatch.setenv("SERI_SANDBOX", "none")
    opener = _opener(tmp_path, silent_server)
    opened = threading.Event()
    opener.open_behind(opened.set)
    time.sleep(1.0)  # opened by now, waiting for the server's answer
    assert not opener.ready
    began = time.monotonic()
    opener.leave(timeout=LOOKUP_WAIT)
    took = time.monotonic() - began
    assert opener.ready and opened.is_set()
    assert [t.name for t in threading.enumerate() if t.name == "seri-open"] == []
    assert took < LOOKUP_WAIT / 2, f"leaving waited {took:.1f} s for the window"
    chat = opener.result()
    assert chat.session.known_window() is None  # the window never came
    chat.close()


def test_leaving_before_anything_opened_is_nothing_to_wait_for(tmp_path: Path) -> None:
    opener = _opener(tmp_path, "http://127.0.0.1:9/v1")
    opener.leave(timeout=LOOKUP_WAIT)
    assert not opener.started
