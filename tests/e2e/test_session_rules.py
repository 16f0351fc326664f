"""An "always" answer is a session allow rule, stored with the session (issue 16, item 2).

The person answers "always" on a real pseudo-terminal; later runs of the installed `seri`
on the same session (`--continue`, `--resume`, `--fork`) allow what was allowed, without
asking, and `/permissions` shows the rule with the call it was given for. A new session
does not inherit it, nor does a session after /clear.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_interactive import PROMPT, Terminal, _terminal_env


def _tool_results(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_always_is_kept_with_the_session_and_shown_by_permissions(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    first: list[dict[str, Any]] = [
        {"tool_calls": [call("b1", "bash", command="echo one")]},
        {"text": "ran it"},
    ]
    with FakeModel(first) as fake:
        term = Terminal(["chat"], project, _terminal_env(seri_home, fake))
        term.expect(PROMPT)
        term.type("say one")
        asked = term.expect("allow? [1] ")
        term.type("a")
        term.expect(PROMPT)
        term.type("/exit")
        assert term.wait() == 0, term.output
    assert "2 always: bash(echo *) for this session" in asked
    session_id = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"]

    later: list[dict[str, Any]] = [
        {"tool_calls": [call("b2", "bash", command="echo two")]},
        {"tool_calls": [call("b3", "bash", command="touch three")]},
        {"text": "continued"},
        {"tool_calls": [call("b4", "bash", command="echo four")]},
        {"text": "resumed"},
        {"tool_calls": [call("b5", "bash", command="echo five")]},
        {"text": "new session"},
    ]
    with FakeModel(later) as fake:
        continued = run_seri("chat", "--continue", "-p", "again", env=chat_env(fake))
        resumed = run_seri(
            "chat", "--resume", session_id, input="once more\n/permissions\n", env=chat_env(fake)
        )
        fresh = run_seri("chat", "-p", "elsewhere", env=chat_env(fake))
        requests = fake.requests
    assert continued.returncode == 0, continued.stderr
    assert resumed.returncode == 0, resumed.stderr
    # --continue, with no one to ask: the stored rule allows echo; it allows nothing else.
    assert _tool_results(requests[1])[-1].startswith("two\n")
    assert _tool_results(requests[2])[-1].startswith("denied by policy")
    # --resume: allowed again, and /permissions says where the rule came from.
    assert _tool_results(requests[4])[-1].startswith("four\n")
    shown = resumed.stdout + resumed.stderr
    line = next(line for line in shown.splitlines() if "bash(echo *)" in line)
    assert line.split()[:3] == ["allow", "bash(echo", "*)"]
    assert "this session: you said always to bash echo one (" in line
    # A new session starts from config.json.
    assert fresh.returncode == 0, fresh.stderr
    assert _tool_results(requests[6])[-1].startswith("denied by policy")


def test_a_fork_keeps_the_rules_and_clear_drops_them(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    first: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "write_file", path="a.txt", content="a\n")]},
        {"text": "wrote a"},
        {"tool_calls": [call("w2", "write_file", path="b.txt", content="b\n")]},
        {"text": "asked for b"},
    ]
    with FakeModel(first) as fake:
        term = Terminal(["chat"], project, _terminal_env(seri_home, fake))
        term.expect(PROMPT)
        term.type("write a")
        term.expect("allow? [1] ")
        term.type("a")
        term.expect(PROMPT)
        term.type("/clear")
        term.expect(PROMPT)
        term.type("write b")
        # The new session asks again: "always" was said to the old one.
        cleared = term.expect("allow? [1] ")
        term.type("n")
        term.expect(PROMPT)
        term.type("/exit")
        assert term.wait() == 0, term.output
    assert "? write_file  b.txt" in cleared
    sessions = [json.loads(s) for s in run_seri("sessions", "--json").stdout.splitlines()]
    first_id = min(sessions, key=lambda s: str(s["created"]))["id"]
    forked: list[dict[str, Any]] = [
        {"tool_calls": [call("w3", "write_file", path="c.txt", content="c\n")]},
        {"text": "wrote c"},
    ]
    with FakeModel(forked) as fake:
        result = run_seri(
            "chat", "--resume", first_id, "--fork", "-p", "write c", env=chat_env(fake)
        )
    assert result.returncode == 0, result.stderr
    assert "forked session" in result.stderr, (result.stderr, fake.requests[-1])
    assert (project / "c.txt").read_text() == "c\n"
    assert not (project / "b.txt").exists()
