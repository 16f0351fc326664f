"""`seri chat` in a real terminal (tmux), against the loopback model: what a person sees.

Keys go in with send-keys, pastes as bracketed pastes, Ctrl-C as the terminal sends it; the
screens come back with capture-pane and are compared with reviewed golden files in
tests/golden/terminal/ (ids, paths and the version normalised). `make golden` rewrites them
(SERI_REGEN_GOLDEN=1); review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from seri import __version__
from tests.conftest import RunSeri, seri_env
from tests.e2e.test_chat import call, chat_env
from tests.golden_files import check_golden as check_golden_file
from tests.tmux_terminal import COLUMNS, TmuxTerminal, normalised

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "terminal"
APPROVAL = "allow? [1]"


def _env(seri_home: Path, fake: FakeModel, **extra: str) -> dict[str, str]:
    # HOME is the project's parent, so the banner says ~/project whatever the temp path.
    env = seri_env(seri_home, {**chat_env(fake), "SERI_MODEL": "fake/model", **extra})
    env["HOME"] = str(seri_home.parent)
    env.pop("NO_COLOR", None)
    env["LANG"] = env["LC_ALL"] = "C.UTF-8"
    return env


def _open(
    terminals: list[TmuxTerminal],
    project: Path,
    env: dict[str, str],
    *args: str,
    columns: int = COLUMNS,
) -> TmuxTerminal:
    terminal = TmuxTerminal(project, env, ("chat", *args), columns=columns)
    terminals.append(terminal)
    terminal.wait_for(f"seri {__version__} · ")  # the banner: the session is open
    terminal.wait_for_prompt()
    return terminal


def check_golden(name: str, screen: str, project: Path) -> None:
    text = normalised(screen, project=project, version=__version__)
    check_golden_file(GOLDEN / f"{name}.txt", text)


def _user_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def stop_a_streaming_answer(
    terminals: list[TmuxTerminal], project: Path, seri_home: Path, key: str, notice: str
) -> tuple[str, list[str], int]:
    """Stop an answer mid-stream with ``key`` (seri says ``notice``), ask again, and leave
    with Ctrl-D: the screen before leaving, what each request asked, and seri's exit status."""
    script: list[dict[str, Any]] = [
        {"text": "Thinking about it", "stall_after_chunks": 4, "stall_seconds": 60},
        {"text": "Fresh start."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("take your time")
        terminal.wait_for("Thinking")
        terminal.keys(key)
        terminal.wait_for(notice)
        terminal.wait_for_prompt(2)
        terminal.line("again")
        terminal.wait_for("Fresh start.")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
        asked = [_user_messages(r)[-1] for r in fake.requests]
        terminal.keys("C-d")
        return screen, asked, terminal.exit_status()


def test_golden_a_pasted_snippet_is_one_request(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    snippet = "def add(a, b):\n    return a + b\n\nprint(add(1, 2))"
    answer = (
        "## What it does\n\n"
        "`add` returns the **sum** of its arguments:\n\n"
        "- `add(1, 2)` is `3`\n- it works for strings too\n\n"
        "```python\nprint(add('a', 'b'))  # ab\n```\n"
    )
    with FakeModel([{"text": answer}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.paste(snippet)
        terminal.keys("Escape", "Enter")  # Alt-Enter: one more line, not sent yet
        terminal.type("what does this print?")
        terminal.keys("Enter")
        terminal.wait_for_prompt(2)
        requests = list(fake.requests)
        screen = terminal.history()
        terminal.keys("C-d")
        status = terminal.exit_status()
    assert status == 0
    assert len(requests) == 1
    assert _user_messages(requests[0]) == [f"{snippet}\nwhat does this print?"]
    check_golden("paste_is_one_request", screen, project)


def test_golden_an_approval_shows_the_diff_and_always_stops_asking(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    (project / "app.py").write_text("def greet(name):\n    return 'hi ' + name\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("e1", "edit", path="app.py", old_string="'hi '", new_string="'hello '")
            ]
        },
        {
            "tool_calls": [
                call("e2", "edit", path="app.py", old_string="name\n", new_string="name.title()\n")
            ]
        },
        {
            "tool_calls": [
                call("w1", "write_file", path="NOTES.md", content="# Notes\n\n- greet says hello\n")
            ]
        },
        {"text": "Changed `greet`; no notes written."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("make greet friendlier")
        terminal.wait_for(APPROVAL)
        terminal.line("a")
        terminal.wait_for(APPROVAL, 2)
        terminal.line("not now, keep the notes in README")
        terminal.wait_for_prompt(2)
        terminal.line("/permissions")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
        requests = list(fake.requests)
    # Asked twice: the first edit, and the write; the second edit ran under "always".
    assert screen.count(APPROVAL) == 2
    greeted = "def greet(name):\n    return 'hello ' + name.title()\n"
    assert (project / "app.py").read_text() == greeted
    assert not (project / "NOTES.md").exists()
    denied = requests[3]["messages"][-1]
    assert denied["content"] == "denied by user: not now, keep the notes in README"
    check_golden("approval_diff_and_always", screen, project)


def test_golden_failures_and_denials_are_visible(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(
        json.dumps({"permissions": {"deny": ["bash(rm *)"], "allow": ["bash(ls *)", "edit"]}})
    )
    (project / "app.py").write_text("x = 1\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("r1", "read_file", path="missing.txt"),
                call("e1", "edit", path="app.py", old_string="y = 2", new_string="y = 3"),
                call("b1", "bash", command="rm -rf build"),
                call("b2", "bash", command="ls no-such-dir"),
            ]
        },
        {"text": "None of that worked."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("clean up")
        terminal.wait_for_prompt(2)
        screen = terminal.history()
        coloured = terminal.coloured()
    assert "✗ read_file  missing.txt: missing.txt does not exist" in screen
    assert "✗ edit  app.py: old_string not found in app.py" in screen
    assert "⊘ bash  rm -rf build: denied by rule bash(rm *)" in screen
    assert "✗ bash  ls no-such-dir: exit code 2" in screen
    # Outcomes in colour: red for errors, yellow for denials.
    assert "\x1b[31m✗" in coloured and "\x1b[33m⊘" in coloured
    check_golden("failures_and_denials", screen, project)


def test_golden_escape_sequences_from_the_model_and_tools_are_shown_not_obeyed(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    hostile = "Clearing\x1b[2J\x1b[H now. \x1b]0;pwned\x07Title? \x1b[31mred\x1b[0m bell\x07"
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("b1", "bash", command="printf 'out\\033[2J\\033]0;owned\\007\\n'")]},
        {"text": hostile},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake), "--allow", "bash(printf *)")
        title = terminal.title()
        terminal.line("show me")
        terminal.wait_for_prompt(2)
        screen = terminal.screen()
        history = terminal.history()
        after = terminal.title()
    # Nothing was cleared (the sandbox line and the banner are still the first lines) and the
    # title is unchanged.
    first, second = screen.split("\n")[:2]
    assert first.startswith("seri: bash runs ") and second.startswith(f"seri {__version__} · ")
    assert history.count("seri>") == 2
    assert after == title and "pwned" not in after and "owned" not in after
    assert "Clearing␛[2J␛[H now. ␛]0;pwned␇Title? ␛[31mred␛[0m bell␇" in screen
    assert "│ out␛[2J␛]0;owned␇" in screen
    check_golden("escape_sequences_neutralised", screen, project)


def test_golden_ctrl_c_cancels_the_turn_and_ctrl_d_leaves(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    screen, asked, status = stop_a_streaming_answer(
        terminals, project, seri_home, "C-c", "cancelled (Ctrl-C)"
    )
    assert status == 0
    assert asked == ["take your time", "again"]
    lines = screen.splitlines()
    cancelled = next(i for i, line in enumerate(lines) if "cancelled (Ctrl-C)" in line)
    assert lines[cancelled].startswith("seri: ")  # on a fresh line, not after the partial text
    assert lines[cancelled + 1].startswith("seri> ")
    check_golden("ctrl_c_then_ctrl_d", screen, project)


def test_golden_continue_replays_the_last_exchange(
    run_seri: RunSeri, project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "write_file", path="hello.py", content="print('hello')\n")]},
        {"tool_calls": [call("b1", "bash", command="python3 hello.py")]},
        {"text": "Wrote `hello.py`; it prints **hello**."},
        {"text": "Welcome back."},
    ]
    with FakeModel(script) as fake:
        first = run_seri(
            "chat",
            "--allow",
            "write_file",
            "--allow",
            "bash",
            "-p",
            "write hello.py and run it",
            env={**chat_env(fake), "SERI_MODEL": "fake/model"},
        )
        assert first.returncode == 0, first.stderr
        terminal = _open(terminals, project, _env(seri_home, fake), "--continue")
        screen = terminal.history()
        terminal.line("/exit")
        status = terminal.exit_status()
    assert status == 0
    assert "where you left off" in screen and "you› write hello.py and run it" in screen
    check_golden("continue_replays", screen, project)


def test_golden_status_cost_and_model(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    script: list[dict[str, Any]] = [
        # The billed count is given: the fake's own count grows with the length of the temporary
        # project path in the system prompt, which made /cost's figure differ from run to run.
        {"text": "Hello.", "usage": {"cost": 0.0123, "prompt_tokens": 255}},
        {"text": "Hello from the other model.", "usage": {"cost": 0.002}},
    ]
    with FakeModel(script, models=("fake/model", "other/model")) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("hi")
        terminal.wait_for_prompt(2)
        for number, command in enumerate(("/status", "/cost", "/model other/model", "/oops"), 3):
            terminal.line(command)
            terminal.wait_for_prompt(number)
        terminal.line("hi again")
        terminal.wait_for("Hello from the other model.")
        terminal.wait_for_prompt(7)
        screen = terminal.history()
        models = [request["model"] for request in fake.requests]
        terminal.line("/exit")
        status = terminal.exit_status()
    assert models == ["fake/model", "other/model"]
    assert "unknown command /oops; /help lists them" in screen
    assert status == 0  # a typo is not a failure of the session
    check_golden("status_cost_model", screen, project)


def test_golden_keys_typed_while_a_task_runs_wait_for_the_next_prompt(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("b1", "bash", command="sleep 3")]},
        {"text": "Done sleeping."},
        {"text": "Next one answered."},
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake), "--allow", "bash(sleep *)")
        terminal.line("sleep a bit")
        terminal.wait_for("bash sleep 3 · ")  # the spinner: the command is running
        terminal.line("and then this")
        terminal.wait_for("Next one answered.")
        terminal.wait_for_prompt(3)
        screen = terminal.history()
        requests = list(fake.requests)
    asked = [_user_messages(r)[-1] for r in requests]
    assert asked == ["sleep a bit", "sleep a bit", "and then this"]
    # Not echoed into the running task's output: shown once, at the prompt that takes it.
    assert screen.count("and then this") == 1 and "seri> and then this" in screen
    check_golden("typed_ahead", screen, project)


def test_the_spinner_shows_time_tokens_and_how_to_interrupt(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    script: list[dict[str, Any]] = [
        # A second or two of reasoning, a byte at a time.
        {
            "reasoning": "Let me think. " * 12,
            "text": "Thought it through.",
            "piece_chars": 84,
            "drip_interval": 0.002,
        },
    ]
    with FakeModel(script) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        terminal.line("think hard")
        shown = terminal.wait_for(" tokens · Esc to interrupt")
        terminal.wait_for("Thought it through.")
        terminal.wait_for_prompt(2)
        after = terminal.history()
    spinning = next(line for line in shown.splitlines() if "Esc to interrupt" in line)
    assert " thinking · " in spinning and " s · " in spinning
    assert "Esc to interrupt" not in after  # wiped once the answer came


def test_no_color_turns_seris_colours_off(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    (project / "a.txt").write_text("a\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("e1", "edit", path="a.txt", old_string="zz", new_string="y")]},
        {"text": "## Heading\n- a **list**\n"},
    ]
    with FakeModel(script) as fake:
        env = _env(seri_home, fake)
        env["NO_COLOR"] = "1"
        terminal = _open(terminals, project, env, "--allow", "edit")
        terminal.line("go")
        terminal.wait_for_prompt(2)
        coloured = terminal.coloured()
        screen = terminal.history()
    assert "✗ edit  a.txt: old_string not found" in screen
    assert "## Heading\n- a **list**" in screen  # shown as written, not restyled
    for colour in ("\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[36m"):
        assert colour not in coloured


def test_history_is_kept_across_sessions(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    with FakeModel([{"text": "one"}, {"text": "two"}]) as fake:
        first = _open(terminals, project, _env(seri_home, fake))
        first.line("remember this line")
        first.wait_for_prompt(2)
        first.keys("C-d")
        assert first.exit_status() == 0
        second = _open(terminals, project, _env(seri_home, fake))
        second.keys("Up")
        shown = second.wait_for("seri> remember this line")
        second.keys("Enter")
        second.wait_for("two")
        asked = [_user_messages(r)[-1] for r in fake.requests]
    assert asked == ["remember this line", "remember this line"]
    assert shown.count("remember this line") == 1
    assert oct((seri_home / "input_history").stat().st_mode & 0o777) == "0o600"


@pytest.mark.parametrize("term", ["screen-256color", "dumb"])
def test_a_bad_rule_found_while_the_session_opens_ends_seri_with_one_line(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal], term: str
) -> None:
    """The prompt comes up before the session is opened: a rule that cannot be parsed still
    ends seri at once with its one line (exit 2), without anything being typed."""
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps({"permissions": {"allow": ["bash("]}}))
    with FakeModel([{"text": "never"}]) as fake:
        env = {**_env(seri_home, fake), "TERM": term}
        terminal = TmuxTerminal(project, env)
        terminals.append(terminal)
        status = terminal.exit_status()
        screen = terminal.history()
        calls = len(fake.requests)
    assert status == 2
    assert calls == 0
    assert "seri: permissions.allow: permission rule 'bash(' is not" in screen
    assert "Traceback" not in screen


def test_the_interactive_chat_holds_its_session_until_clear_and_exit(
    run_seri: RunSeri, project: Path, seri_home: Path, terminals: list[TmuxTerminal]
) -> None:
    """One writer per session in the prompt_toolkit chat too: while it works on a session
    another `--resume` of it (interactive or not) is refused naming its pid; /clear gives the
    old session back; leaving gives back the new one."""
    from seri.io.session import leases
    from seri.io.session.store import open_store

    script: list[dict[str, Any]] = [
        {"text": "First answer."},
        {"text": "Resumed elsewhere."},
        {"text": "In the new session."},
    ]
    with FakeModel(script) as fake:
        env = _env(seri_home, fake)
        terminal = _open(terminals, project, env)
        terminal.line("first")
        terminal.wait_for("First answer.")
        terminal.wait_for_prompt(2)
        store = open_store(seri_home)
        old = conversations_ids(store)[0]
        holder = leases.holder_of(store, old)
        assert holder is not None and holder.command == "seri chat"
        rival = TmuxTerminal(project, env, ("chat", "--resume", old))
        terminals.append(rival)
        assert rival.exit_status() == 1
        assert f"pid {holder.pid}" in rival.history(), rival.history()
        terminal.line("/clear")
        terminal.wait_for_prompt(3)
        assert leases.holder_of(store, old) is None  # given back at once
        elsewhere = run_seri("chat", "--resume", old, "-p", "again", env=env)
        assert elsewhere.returncode == 0, elsewhere.stderr
        terminal.line("next")
        terminal.wait_for("In the new session.")
        terminal.wait_for_prompt(4)
        new = next(s for s in conversations_ids(store) if s != old)
        assert leases.holder_of(store, new) is not None
        terminal.keys("C-d")
        assert terminal.exit_status() == 0
        assert leases.holder_of(store, new) is None
        store.close()


def conversations_ids(store: Any) -> list[str]:
    from seri.io.session import session_table

    return [s.id for s in session_table.list_sessions(store, None)]


def test_a_prompt_file_skipped_behind_the_prompt_is_said_above_it(
    project: Path, seri_home: Path, terminals: list[TmuxTerminal], tmp_path: Path
) -> None:
    """A new session opens behind the prompt: what opening found wrong (here an AGENTS.md
    linked out of the project) is printed above the prompt, not over it, and not lost."""
    secret = tmp_path / "outside.md"
    secret.write_text("not for the model\n")
    (project / "AGENTS.md").symlink_to(secret)
    with FakeModel([{"text": "Fine."}]) as fake:
        terminal = _open(terminals, project, _env(seri_home, fake))
        shown = terminal.wait_for("seri: warning: AGENTS.md (")
        terminal.line("hi")
        terminal.wait_for("Fine.")
        system = fake.requests[0]["messages"][0]["content"]
    lines = shown.splitlines()
    warning = next(i for i, line in enumerate(lines) if "seri: warning: AGENTS.md (" in line)
    assert lines[warning].startswith("seri: warning: AGENTS.md (")  # a line of its own
    assert "not for the model" not in str(system)
