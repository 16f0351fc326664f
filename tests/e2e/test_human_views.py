"""Every human view of every command and slash command, over hostile stored data, on a real
terminal: nothing raw reaches it (README "Trust": every human view is made inert).

The store, the project's files and the servers hold text with escape sequences (a window
title, a screen clear), an 8-bit CSI, a bidirectional override, a carriage return and, in
every field shown on one line (a session's title, a pin, a server's name, a rule), a newline
followed by a forged row. Each command and each slash command is then run on a
pseudo-terminal (the installed `seri`), and its output must hold none of them raw, and no
line may begin with the forged row.

The commands come from the CLI's own list (``seri.commands.main.COMMANDS``) and the slash
commands from the chat's registry (``seri.runtime.terminal.slash.COMMANDS``): a new one fails this
test until its views are added below. Machine forms (``--json``, ``export``) keep the
exact text on purpose and are named, with why, in ``DATA_FORMS``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from seri.commands.main import COMMANDS
from seri.runtime.terminal.slash import COMMANDS as SLASH_COMMANDS
from tests.conftest import RunSeri, seri_env
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_interactive import PROMPT, Terminal
from tests.mcp.conftest import HOSTILE as HOSTILE_SERVER

HOSTILE = "\x1b]0;PWNED-TITLE\x07\x1b[2JPWNED-CLEAR\x9b31mPWNED-C1\u202ePWNED-BIDI\rPWNED-CR"
FORGED = "FORGED-ROW"
# For what is shown on one line: a newline must not start a line of its own.
ONE_LINE = f"{HOSTILE}\n{FORGED}"
RAW = ("\x1b]0;PWNED", "\x1b[2JPWNED", "\x9b31m", "\u202e", "\rPWNED-CR")

# The forms whose output is data, not a view: the exact text is the point.
DATA_FORMS = {
    ("sessions", "export"): "a session as JSON Lines or Markdown, byte for byte, for a file",
    ("trajectory", "export"): "recordings as JSON Lines, OTLP or ATIF, for a file or a collector",
    ("--json",): "machine output of any command: JSON escapes every control character",
}


def raw_in(output: str) -> list[str]:
    """The raw sequences in what a terminal got (its own CR LF line ends set aside)."""
    text = output.replace("\r\n", "\n")
    found = [raw for raw in RAW if raw in text]
    lines = text.split("\n")
    found += [
        f"line {n} after {lines[n - 1][-80:]!r}"
        for n, line in enumerate(lines)
        if line.startswith(FORGED)
    ]
    return found


def on_terminal(args: list[str], project: Path, env: dict[str, str]) -> tuple[int, str]:
    terminal = Terminal(args, project, env)
    status = terminal.wait(timeout=60)
    return status, terminal.output


def _seed(run_seri: RunSeri, project: Path, seri_home: Path) -> tuple[str, str]:
    """Hostile data everywhere a view reads from; the two sessions' ids (kept, thrown away)."""
    seri_home.mkdir(mode=0o700, parents=True, exist_ok=True)
    (seri_home / "config.json").write_text(
        json.dumps({"permissions": {"allow": [f"bash(printf {ONE_LINE}*)"]}})
    )
    (project / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    ONE_LINE: {"command": sys.executable, "args": [str(HOSTILE_SERVER)]},
                    f"broken {ONE_LINE}": {"type": "sse", "url": f"https://h/{ONE_LINE}"},
                }
            }
        )
    )
    # A project hook and skills whose names, commands and descriptions are hostile.
    hook = {"type": "command", "command": f"printf '%s' '{ONE_LINE}' >/dev/null"}
    (project / ".seri").mkdir()
    (project / ".seri" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Glob", "hooks": [hook]}]}})
    )
    for root, name in ((project / ".agents" / "skills", "tidy"), (seri_home / "skills", HOSTILE)):
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {HOSTILE}\n---\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("b1", "bash", command=f"printf '%s' '{HOSTILE}'"),
                call("m1", "remember", text=f"remember {HOSTILE}", scope="project"),
                call("m2", "remember", text=f"again {HOSTILE}", scope="project"),
                call("w1", "write_file", path="notes.txt", content=f"{HOSTILE}\n"),
            ]
        },
        {"text": f"answer {HOSTILE}"},
        {"text": f"second {HOSTILE}"},
    ]
    ids = []
    with FakeModel(script) as fake:
        for prompt in (f"task {HOSTILE}", f"other {HOSTILE}"):
            result = run_seri(
                "chat", "--allow", "bash", "--allow", "remember", "--allow", "write_file",
                "-p", prompt, env=chat_env(fake),
            )  # fmt: skip
            assert result.returncode == 0, result.stderr
            ids.append(json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"])
    for session in ids:
        assert run_seri("sessions", "rename", session, ONE_LINE).returncode == 0
    kept = ids[0]
    for text in (ONE_LINE, f"second pin {ONE_LINE}", f"third {ONE_LINE}"):
        assert run_seri("pin", "--session", kept, text).returncode == 0
    return kept, ids[1]


def command_views(kept: str, dropped: str) -> dict[str, list[list[str]]]:
    """Each command's human views, in the order they run (later ones may change the data)."""
    return {
        "chat": [["chat", "-p", f"on a terminal {HOSTILE}"]],
        "sessions": [
            ["sessions"],
            ["sessions", "show", kept],
            ["sessions", "search", "PWNED"],
            ["sessions", "rename", kept, ONE_LINE],
            ["sessions", "rm", dropped, "--yes"],
            ["sessions", "import"],
        ],
        "compact": [["compact", "--session", kept, "--dry-run"]],
        "handoff": [["handoff", "--session", kept, "--focus", ONE_LINE]],
        "pin": [
            ["pin", "--session", kept, "--list"],
            ["pin", "--session", kept, "--rm", "2"],
            ["pin", "--session", kept, ONE_LINE],
        ],
        "rewind": [["rewind", "--session", kept, "--list"]],
        "trajectory": [["trajectory", "status"], ["trajectory", "prune", "--dry-run"]],
        "memory": [["memory", "list"], ["memory", "approve", "1"], ["memory", "reject", "2"]],
        "mcp": [["mcp", "list"], ["mcp", "approve", ONE_LINE], ["mcp", "list"], ["mcp", "revoke"]],
        "completion": [["completion", "bash"], ["completion", "session-ids"]],
        "skills": [
            ["skills", "list"],
            ["skills", "approve"],
            ["skills", "list"],
            ["skills", "revoke"],
        ],
        "hooks": [["hooks", "list"], ["hooks", "approve"], ["hooks", "list"], ["hooks", "revoke"]],
        # No human view: stdout is JSON-RPC only and stderr has no stored data (the stored
        # data it sends, as JSON, is tests/e2e/test_acp.py's).
        "acp": [],
    }


# Each slash command as typed in the chat, in order (the chat runs one task first, so that
# /last and /cost have something to show).
SLASH_LINES = {
    "/status": ["/status"],
    "/goal": ["/goal"],
    "/cost": ["/cost"],
    "/permissions": ["/permissions"],
    "/mcp": ["/mcp"],
    "/last": ["/last"],
    "/pin": ["/pin"],
    "/memory": ["/memory pending"],
    "/trajectory": ["/trajectory"],
    "/max-turns": ["/max-turns 50"],
    "/model": ["/model"],
    "/rewind": ["/rewind"],
    "/compact": ["/compact"],
    "/help": ["/help"],
    "/diff": ["/diff"],
    "/init": ["/init"],
    "/clear": ["/clear"],
    "/exit": ["/exit"],
}


def test_every_view_of_every_command_is_inert_over_hostile_data(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    assert set(command_views("", "")) == set(COMMANDS), "a command without its views here"
    assert set(SLASH_LINES) == {c.name for c in SLASH_COMMANDS}, "a slash command missing here"
    kept, dropped = _seed(run_seri, project, seri_home)
    answers: list[dict[str, Any]] = [
        {"text": f"answer {HOSTILE}"},
        {"tool_calls": [call("b2", "bash", command=f"printf '%s' '{HOSTILE}'")]},
        {"text": f"done {HOSTILE}"},
        *({"text": "no"} for _ in range(6)),
    ]
    seen: dict[str, str] = {}
    with FakeModel(answers, auto_recap=True) as fake:
        env = seri_env(seri_home, {**chat_env(fake), "TERM": "dumb", "COLUMNS": "200"})
        for views in command_views(kept, dropped).values():
            for args in views:
                assert not any(all(w in args for w in form) for form in DATA_FORMS), args
                status, output = on_terminal(args, project, env)
                assert status == 0, (args, output)
                seen[" ".join(args)] = output
        terminal = Terminal(["chat", "--resume", kept, "--allow", "bash"], project, env)
        terminal.expect(PROMPT)
        terminal.type("run it")
        terminal.expect("[y/N] ")  # the project's server, shown before the first task
        terminal.type("n")
        terminal.expect(PROMPT, timeout=30)
        for lines in SLASH_LINES.values():
            for line in lines:
                terminal.type(line)
                if line != "/exit":
                    terminal.expect(PROMPT, timeout=30)
        terminal.wait(timeout=30)
        seen["chat (interactive, every slash command)"] = terminal.output
    for view, output in seen.items():
        assert not raw_in(output), (view, raw_in(output), output)
    # The hostile text did reach the views that show stored data, inert.
    for view in (
        f"sessions show {kept}",
        "sessions",
        f"pin --session {kept} --list",
        "mcp list",
        "memory list",
        "skills list",
        "hooks list",
        "chat (interactive, every slash command)",
    ):
        assert "PWNED-TITLE" in seen[view] and "␛]0;" in seen[view], view
    listed = seen[f"pin --session {kept} --list"]
    assert "1. ␛]0;PWNED-TITLE␇" in listed and f"␤{FORGED}" in listed
