"""`seri chat --resume` without an id: on a terminal it offers the project's recent sessions
(a real pseudo-terminal here); off a terminal it says to give an id."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from seri.pure.session.resume_choice import choice_lines, read_choice, resume_without_id
from tests.conftest import SERI, RunSeri, seri_env

KEY = "sk-or-v1-" + "ab12" * 16


def test_the_missing_id_is_found_where_it_is_missing() -> None:
    assert resume_without_id(["chat", "--resume"]) == 1
    assert resume_without_id(["chat", "--resume", "-p", "x"]) == 1
    assert resume_without_id(["chat", "--resume", "3fa9"]) is None
    assert resume_without_id(["chat", "--", "--resume"]) is None
    assert read_choice("2\n", 3) == 1 and read_choice("\n", 3) is None
    with pytest.raises(ValueError, match="from 1 to 3"):
        read_choice("4", 3)
    assert choice_lines([("abcdef123456", "2026-01-01 10:00", "", 3)]) == [
        "   1  2026-01-01 10:00  -  (3 messages, abcdef12)"
    ]


def _read_until(fd: int, wanted: bytes, timeout: float = 20) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while wanted not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += os.read(fd, 4096)
            except OSError:
                break
    return seen


def test_resume_alone_offers_the_recent_sessions(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    with FakeModel([{"text": "first"}, {"text": "second"}, {"text": "resumed"}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        assert run_seri("chat", "-p", "the older one", env=env).returncode == 0
        assert run_seri("chat", "-p", "the newer one", env=env).returncode == 0
        off_terminal = run_seri("chat", "--resume", "-p", "go", env=env)
        assert off_terminal.returncode == 2 and "needs a session id" in off_terminal.stderr
        older = json.loads(run_seri("sessions", "--json").stdout.splitlines()[1])["id"]
        pid, fd = pty.fork()
        if pid == 0:  # the child: seri on the terminal
            os.chdir(project)
            os.execve(SERI, [SERI, "chat", "--resume", "-p", "go on"], seri_env(seri_home, env))
        shown = _read_until(fd, b"resume which?")
        assert b"the newer one" in shown and b"the older one" in shown
        assert shown.index(b"the newer one") < shown.index(b"the older one")
        os.write(fd, b"2\r")
        rest = _read_until(fd, b"resumed")
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert b"resumed" in rest and os.waitstatus_to_exitcode(status) == 0
    shown_older = run_seri("sessions", "show", older, "--json").stdout.splitlines()
    assert json.loads(shown_older[-1])["text"] == "resumed"


def test_words_search_the_sessions_and_one_match_is_resumed(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    with FakeModel([{"text": "a"}, {"text": "b"}, {"text": "c"}, {"text": "resumed"}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        for task in ("fix the flaky login test", "update the docs", "fix the parser"):
            assert run_seri("chat", "-p", task, env=env).returncode == 0
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(project)
            os.execve(SERI, [SERI, "chat", "--resume", "-p", "go on"], seri_env(seri_home, env))
        _read_until(fd, b"resume which?")
        os.write(fd, b"fix\r")  # two match: listed, asked again
        listed = _read_until(fd, b"resume which?")
        os.write(fd, b"FLAKY login\r")  # one matches: resumed
        rest = _read_until(fd, b"resumed")
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert b"2 sessions match" in listed and b"update the docs" not in listed.split(b"match")[1]
    assert b"resumed" in rest and os.waitstatus_to_exitcode(status) == 0
    login = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])  # newest
    assert login["title"].startswith("fix the flaky login test")


def test_enter_cancels(run_seri: RunSeri, seri_home: Path, project: Path) -> None:
    with FakeModel([{"text": "first"}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        assert run_seri("chat", "-p", "only one", env=env).returncode == 0
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(project)
            os.execve(SERI, [SERI, "chat", "--resume"], seri_env(seri_home, env))
        _read_until(fd, b"resume which?")
        os.write(fd, b"x\r")
        assert b"from 1 to 1" in _read_until(fd, b"from 1 to 1")
        os.write(fd, b"\r")
        rest = _read_until(fd, b"nothing resumed")
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    assert b"nothing resumed" in rest and os.waitstatus_to_exitcode(status) == 0
    assert subprocess.run([SERI, "--version"], capture_output=True, check=False).returncode == 0


def _on_terminal(argv: list[str], home: Path, cwd: Path, answer: bytes, until: bytes) -> bytes:
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execve(SERI, [SERI, *argv], seri_env(home))
    shown = _read_until(fd, b"[y/N]")
    os.write(fd, answer)
    shown += _read_until(fd, until)
    os.waitpid(pid, 0)
    os.close(fd)
    return shown


def test_rm_asks_on_a_terminal(run_seri: RunSeri, seri_home: Path, project: Path) -> None:
    with FakeModel([{"text": "first"}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        assert run_seri("chat", "-p", "delete me later", env=env).returncode == 0
    session_id = json.loads(run_seri("sessions", "--json").stdout)["id"]
    argv = ["sessions", "rm", session_id]
    kept = _on_terminal(argv, seri_home, project, b"n\r", b"nothing was deleted")
    assert b"delete me later" in kept and b"nothing was deleted" in kept
    assert run_seri("sessions", "show", session_id).returncode == 0
    gone = _on_terminal(argv, seri_home, project, b"y\r", b"deleted 1 session")
    assert b"deleted 1 session" in gone
    assert run_seri("sessions", "--json").stdout == ""
