"""T9: escape sequences in text seri did not write never reach a terminal as such.

A model answer, a command's output, a file shown in an approval diff, a tool call's
arguments, a provider's error message, and whatever the store holds (an answer, a title, a
staged memory entry, a turn's text) can all carry bytes a terminal obeys: clear the screen,
retitle the window, write the clipboard (OSC 52), send a DCS query, overwrite a line with a
carriage return, reorder it with a bidi override. Every surface that shows such text to a
person must show it inert (``␛[2J``), while the machine forms (``--json``, a piped answer)
keep it byte for byte.

Single (as whoever runs the tests, root in CI): what reaches the terminal is seri's
rewriting of text, which does not ask who runs seri.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import seri_env
from tests.e2e.test_interactive import Terminal
from tests.faults.ledger import FaultLedger
from tests.faults.support import KEY, call, chat_env, run, seri

# Each with a payload no program on the way would write by itself.
HOSTILE = {
    "clear screen": "\x1b[2J\x1b[H",
    "window title": "\x1b]0;PWNED-TITLE\x07",
    "clipboard": "\x1b]52;c;UFdORUQ=\x07",
    "device query": "\x1bP+qPWNED\x1b\\",
    "8-bit CSI": "\x9b31mPWNED",
    "overwrite": "SAFE\rEVIL-OVERWRITE",
    "bidi": "\u202eDENWP",
}
RAW = ("\x1b[2J", "\x1b]0;PWNED", "\x1b]52;", "\x1bP+q", "\x9b31m", "\rEVIL", "\u202e")
SHOWN = (
    "␛[2J",
    "␛]0;PWNED-TITLE␇",
    "␛]52;c;UFdORUQ=␇",
    "␛P+qPWNED␛\\",
    "\\x9b31mPWNED",
    "SAFEEVIL-OVERWRITE",
    "<U+202E>DENWP",
)
PAYLOAD = " ".join(HOSTILE.values())


def _raw_in(text: str) -> list[str]:
    return [raw for raw in RAW if raw in text]


def _all_shown(text: str) -> bool:
    return all(shown in text for shown in SHOWN)


def test_T9_escape_sequences_never_reach_the_terminal(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    (project / "notes.txt").write_text(f"old\n{PAYLOAD}\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call(
                    "b1", "bash", command="printf 'out: %b\\n' '\\033[2J\\033]0;PWNED-TITLE\\007'"
                ),
                call("b2", "bash", command=f"echo '{PAYLOAD}'"),
                call("w1", "write_file", path="notes.txt", content=f"new {PAYLOAD}\n"),
                call("m1", "remember", text=f"remember {PAYLOAD}", scope="project"),
            ]
        },
        {"text": f"answer {PAYLOAD} end"},
        {"status": 400, "body": {"error": {"code": 400, "message": f"bad {PAYLOAD}"}}},
    ]
    surfaces = 8
    fault_ledger.injected("T9", surfaces * len(HOSTILE))
    with FakeModel(script) as fake:
        # A dumb terminal: no colours and no cursor games, so the bytes read back are only
        # text (the coloured path is in tests/e2e/test_golden_terminal.py).
        env = seri_env(seri_home, {**chat_env(fake), "TERM": "dumb", "COLUMNS": "200"})
        terminal = Terminal(
            ["chat", "--allow", "bash(printf *)", "--allow", "remember"], project, env
        )
        terminal.expect("seri> ")
        terminal.type("first")
        terminal.expect("allow? [1] ")  # the echo command, shown inert
        terminal.type("n")
        terminal.expect("allow? [1] ")  # the write, its diff shown inert
        terminal.type("y")
        terminal.expect("seri> ")
        terminal.type("second")
        terminal.expect("seri> ")
        terminal.type("/exit")
        assert terminal.wait() == 1  # the second task met the provider's error
        screen = terminal.output
        session = json.loads(run(seri("sessions", "--json"), home=seri_home, cwd=project).stdout)[
            "id"
        ]
        # The same answer with -p: rendered on a terminal, exact into a pipe.
        with FakeModel([{"text": f"piped {PAYLOAD}"}, {"text": f"tty {PAYLOAD}"}]) as again:
            piped = subprocess.run(
                seri("chat", "-p", "go"),
                cwd=project,
                env=seri_env(seri_home, chat_env(again)),
                capture_output=True,
                check=False,
                timeout=60,
            )
            on_tty = Terminal(
                ["chat", "-p", "go"],
                project,
                seri_env(seri_home, {**chat_env(again), "TERM": "dumb"}),
            )
            assert on_tty.wait() == 0

    # 1-5: the chat on a terminal: the streamed answer, the command's output, the diff of
    # the file in the approval, the tool call's arguments (the command asked about and its
    # denial line), the provider's error message.
    assert not _raw_in(screen), _raw_in(screen)
    assert screen.count("␛]0;PWNED-TITLE␇") >= 5 and _all_shown(screen)
    assert "out: ␛[2J␛]0;PWNED-TITLE␇" in screen  # the command's output
    assert "-old" in screen and "+new ␛[2J" in screen  # the diff
    assert "$ echo '␛[2J" in screen and "⊘ bash  echo '␛[2J" in screen  # the arguments
    assert "bad ␛[2J" in screen  # the provider's message
    fault_ledger.survived("T9", 5 * len(HOSTILE))

    # 6: seri chat -p: a pipe gets the exact bytes, a terminal the inert form.
    assert piped.stdout == f"piped {PAYLOAD}\n".encode()
    assert not _raw_in(on_tty.output) and _all_shown(on_tty.output)
    fault_ledger.survived("T9", len(HOSTILE))

    # 7: what the store holds: sessions show, the session list, memory, rewind.
    human = [
        run(seri(*args), home=seri_home, cwd=project)
        for args in (
            ("sessions", "show", session),
            ("sessions",),
            ("memory", "list"),
            ("rewind", "--session", session, "--list"),
        )
    ]
    for result in human:
        assert result.returncode == 0, result.stderr
        assert not _raw_in(result.stdout + result.stderr), result.args
    assert _all_shown(human[0].stdout)
    assert "answer ␛[2J" in human[0].stdout and "remember ␛[2J" in human[2].stdout
    fault_ledger.survived("T9", len(HOSTILE))

    # 8: --json keeps the exact text.
    shown = run(seri("sessions", "show", session, "--json"), home=seri_home, cwd=project)
    texts = [json.loads(line).get("text", "") for line in shown.stdout.splitlines()[1:]]
    assert f"answer {PAYLOAD} end" in texts
    staged = json.loads(run(seri("memory", "list", "--json"), home=seri_home, cwd=project).stdout)
    assert staged["text"] == f"remember {PAYLOAD}"
    assert KEY not in shown.stdout
    fault_ledger.survived("T9", len(HOSTILE))
