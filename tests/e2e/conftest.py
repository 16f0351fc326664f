"""Fixtures of the end-to-end tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.tmux_terminal import TmuxTerminal


@pytest.fixture
def terminals() -> Iterator[list[TmuxTerminal]]:
    """The tmux terminals a test opens, closed after it."""
    opened: list[TmuxTerminal] = []
    yield opened
    for terminal in opened:
        terminal.close()
