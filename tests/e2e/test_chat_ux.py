"""What a newcomer meets outside the terminal screens: errors that say what to do, automatic
compaction that says what it did, config typos that are named, and the start-up cost of the
interactive prompt kept away from the commands that do not need it."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from seri.pure.terminal.human_units import tokens_short
from tests.conftest import SERI, RunSeri, seri_env
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_compaction import (
    BILL,
    RoutedModel,
    configure,
    filler,
    globs,
    recap_step,
    tool_step,
)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _first_retry_line(env: dict[str, str], cwd: Path) -> str:
    """Start a task against a closed port and read stderr up to its first retry notice."""
    process = subprocess.Popen(
        [SERI, "chat", "-p", "hi"],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 30
        line = ""
        while "retrying" not in line and time.monotonic() < deadline:
            line = process.stderr.readline()
        return line
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("where", ["env", "config"])
def test_a_connection_error_names_the_url_and_the_setting_that_chose_it(
    seri_home: Path, project: Path, where: str
) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"
    extra = {"OPENROUTER_API_KEY": "sk-test", "SERI_MODEL": "fake/model"}
    if where == "env":
        extra["SERI_BASE_URL"] = url
        setting = "set by SERI_BASE_URL"
    else:
        seri_home.mkdir(parents=True)
        (seri_home / "config.json").write_text(json.dumps({"base_url": url}))
        setting = "set by base_url in config.json"
    line = _first_retry_line(seri_env(seri_home, extra), project)
    assert line.startswith(f"seri: could not reach the provider at {url} ({setting}): "), line


def test_a_misspelt_config_key_is_named_with_the_key_it_meant(
    run_seri: RunSeri, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(
        json.dumps({"modle": "x", "compaction": {"keep_token": 5}, "trajectory": {"enabled": True}})
    )
    with FakeModel([{"text": "fine"}]) as fake:
        result = run_seri("chat", "-p", "go", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fine\n"
    assert result.stderr.splitlines() == [
        "seri: warning: config.json: unknown key 'modle'; did you mean 'model'? It is ignored.",
        "seri: warning: config.json: unknown key 'compaction.keep_token'; did you mean "
        "'compaction.keep_tokens'? It is ignored.",
    ]


@pytest.mark.parametrize(
    ("config", "named"),
    [
        ({"permisions": {"deny": ["bash"]}}, "'permisions'; did you mean 'permissions'?"),
        (
            {"permissions": {"deny": ["bash"], "alow": ["edit"]}},
            "'permissions.alow'; did you mean 'permissions.allow'?",
        ),
    ],
)
def test_an_unknown_permissions_key_stops_seri(
    run_seri: RunSeri, seri_home: Path, config: dict[str, Any], named: str
) -> None:
    seri_home.mkdir(parents=True)
    (seri_home / "config.json").write_text(json.dumps(config))
    with FakeModel([{"text": "never"}]) as fake:
        result = run_seri("chat", "-p", "go", env=chat_env(fake))
        calls = len(fake.requests)
    assert result.returncode == 2
    assert calls == 0
    assert len(result.stderr.splitlines()) == 1
    assert f"unknown key {named}" in result.stderr and "safety setting" in result.stderr


def test_automatic_compaction_says_what_it_did(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    configure(seri_home)
    filler(project)
    (project / "x.txt").write_text("x\n")
    turns = [
        tool_step("r1", "read_file", billed=1, path="x.txt"),
        *globs("a", 3, prompt_tokens=BILL),
        tool_step("r2", "read_file", billed=1, path="x.txt"),
        *globs("b", 3, prompt_tokens=BILL),
        {"text": "done"},
    ]
    answers = [recap_step(progress=["one"]), recap_step(progress=["two"])]
    with RoutedModel(turns, lambda b, n: answers[n]) as fake:
        result = run_seri(
            "chat",
            "-p",
            "tidy up",
            env={
                "SERI_BASE_URL": fake.base_url,
                "OPENROUTER_API_KEY": "sk-test",
            },
        )
    assert result.returncode == 0, result.stderr
    notices = [line for line in result.stderr.splitlines() if "compacted:" in line]
    assert len(notices) == 2, result.stderr
    assert notices[0].startswith(f"seri: compacted: {tokens_short(BILL)} → ")
    assert notices[0].endswith(" tokens (recap written)")
    assert notices[1].endswith(" tokens (recap updated)")


def test_scripted_lines_get_no_spinner_and_a_typo_keeps_the_exit_status(run_seri: RunSeri) -> None:
    with FakeModel([{"text": "one"}, {"text": "two"}]) as fake:
        result = run_seri("chat", input="first\n/oops\n/status\nsecond\n", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "one\ntwo\n"
    assert "unknown command /oops; /help lists them" in result.stderr
    assert "Esc to interrupt" not in result.stderr and "\r" not in result.stderr
    assert "model:" in result.stderr and "turn budget:" in result.stderr


def test_a_denial_reason_and_a_tool_error_reach_the_model(run_seri: RunSeri, project: Path) -> None:
    """Without a terminal nobody is asked: the model reads why, as the call's result."""
    (project / "a.txt").write_text("a\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("e1", "edit", path="a.txt", old_string="zz", new_string="y"),
                call("w1", "write_file", path="b.txt", content="b\n"),
            ]
        },
        {"text": "ok"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", "--allow", "edit", "-p", "go", env=chat_env(fake))
        results = [m["content"] for m in fake.requests[1]["messages"] if m["role"] == "tool"]
    assert result.returncode == 0
    assert results[0].startswith("old_string not found in a.txt")
    assert results[1].startswith("denied by policy: write_file(b.txt) needs approval")
    # The person running -p is told too (on stderr; stdout is the answer alone).
    assert result.stdout == "ok\n"
    assert "--allow write_file allows it" in result.stderr


def test_always_for_a_deletion_offers_the_exact_command_only() -> None:
    from seri.pure.permissions.approval import command_rule

    assert command_rule(("rm", "-rf", "build")) == "bash(rm -rf build)"
    assert command_rule(("rm", "-rf", "*.o")) == ""  # a glob: no rule rather than a broad one
    assert command_rule(("pytest", "-q")) == "bash(pytest *)"


@pytest.mark.parametrize("args", [("--version",), ("sessions",), ("chat", "--help")])
def test_commands_other_than_the_interactive_chat_never_load_prompt_toolkit(
    seri_home: Path, project: Path, args: tuple[str, ...]
) -> None:
    env = seri_env(seri_home, {"PYTHONPROFILEIMPORTTIME": "1"})
    done = subprocess.run(
        [SERI, *args], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "prompt_toolkit" not in done.stderr
    assert os.path.basename(SERI) == "seri"


@pytest.mark.parametrize("args", [("--version",), ("sessions",), ("sessions", "--json")])
def test_the_quick_commands_never_load_attrs_or_the_records(
    seri_home: Path, project: Path, args: tuple[str, ...]
) -> None:
    """`seri --version` and `seri sessions` answer in tens of milliseconds: attrs and the
    record classes (~25 ms to import) stay out of them, whatever imports them elsewhere."""
    env = seri_env(seri_home, {"PYTHONPROFILEIMPORTTIME": "1"})
    done = subprocess.run(
        [SERI, *args], cwd=project, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert not {"attrs", "attr", "seri.pure.session.records", "httpx"} & loaded
