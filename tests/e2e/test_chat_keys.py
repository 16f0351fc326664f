"""Keys in a real terminal (tmux) while a task runs: a paste stays one message, Esc stops.

As in Claude Code and Codex: what is typed or pasted while the answer streams waits for the
next prompt (a paste as one paste, an Enter sends it), and Esc interrupts like Ctrl-C.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.e2e.test_golden_terminal import (
    _env,
    _open,
    _user_messages,
    check_golden,
    stop_a_streaming_answer,
)
from tests.tmux_terminal import PROMPT, TmuxTerminal

# About seven seconds of answer (8 KB of stream in 100-byte writes 80 ms apart): long enough
# to paste into. A byte at a time, as it was, paid the scheduler's wake-up for each of the
# 8,323 bytes: 25 s on paper, 40-50 s on a loaded CI machine.
SLOW = {"text": "Streaming slowly. " * 6, "drip_interval": 0.08, "split_bytes": 100}


def test_golden_a_paste_while_the_answer_streams_is_one_more_request(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    pasted = "line one\nline two\nline three"
    script: list[dict[str, Any]] = [SLOW, {"text": "Got all three."}]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("stream something")
        terminal.wait_for("Streaming slowly.")
        terminal.paste(pasted)
        terminal.keys("Enter")
        still_streaming = terminal.history().count(PROMPT) == 1
        terminal.wait_for("Got all three.")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
        requests = list(fake.requests)
        terminal.keys("C-d")
        status = terminal.exit_status()
    assert still_streaming  # the paste really came while the first task ran
    assert status == 0
    assert len(requests) == 2
    assert _user_messages(requests[1])[-1] == pasted
    check_golden("paste_while_streaming", screen, project)


def test_golden_esc_stops_a_streaming_answer(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    screen, asked, status = stop_a_streaming_answer(
        terminals, project, seri_home, "Escape", "cancelled (Esc)"
    )
    assert status == 0
    assert asked == ["take your time", "again"]
    check_golden("esc_stops_the_answer", screen, project)


def test_golden_a_long_paste_is_folded_at_the_prompt_and_sent_whole(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    """200 lines (about 120 KB) at an idle prompt, right after Ctrl-L: one label on the
    screen, one request with every line; Ctrl-O shows a folded paste whole."""
    long_line = "x" * 600
    pasted = "\n".join(f"{n:03} {long_line}" for n in range(200))
    with FakeModel([{"text": "Read all 200."}, {"text": "Short one."}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.keys("C-l")
        terminal.wait_for_prompt()
        terminal.paste(pasted)
        terminal.wait_for("[pasted 200 lines #1]")
        terminal.type(" what is this?")
        terminal.keys("Enter")
        terminal.wait_for("Read all 200.")
        terminal.wait_for_prompt(2)
        terminal.paste("\n".join(f"short {n}" for n in range(12)))
        terminal.wait_for("[pasted 12 lines #2]")
        terminal.keys("C-o")
        terminal.wait_for("short 11")
        terminal.keys("Enter")
        terminal.wait_for("Short one.")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
        requests = list(fake.requests)
    assert len(requests) == 2
    assert _user_messages(requests[0])[-1] == f"{pasted} what is this?"
    assert _user_messages(requests[1])[-1] == "\n".join(f"short {n}" for n in range(12))
    assert long_line not in screen
    check_golden("long_paste_folded", screen, project)
