"""/clear from scripted stdin, and the interactive loop on a real pseudo-terminal.

/clear starts a new session in the same project; the previous one stays in seri.db whole and
resumable, and seri prints its id (issue 6, point 4). The pty tests prove the terminal path:
readline's prompt, a task typed at it, /clear, /rewind with its y/N confirmation on /dev/tty,
/memory, and /exit.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import time
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import SERI, RunSeri, seri_env
from tests.e2e.test_chat import call, chat_env

SESSION_ID = re.compile(r"\b[0-9a-f]{32}\b")
PROMPT = "seri> "


def _sessions(run_seri: RunSeri) -> list[dict[str, Any]]:
    return [json.loads(line) for line in run_seri("sessions", "--json").stdout.splitlines()]


def _messages(run_seri: RunSeri, session_id: str) -> list[dict[str, Any]]:
    shown = run_seri("sessions", "show", session_id, "--json").stdout.splitlines()
    return [json.loads(line) for line in shown[1:]]


def test_clear_keeps_the_previous_session_whole_and_resumable(run_seri: RunSeri) -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("g1", "glob", pattern="*")]},
        {"text": "first answer"},
        {"text": "second answer"},
        {"text": "resumed answer"},
    ]
    with FakeModel(script) as fake:
        result = run_seri("chat", input="first task\n/clear\nsecond task\n", env=chat_env(fake))
        assert result.returncode == 0, result.stderr
        old_id = SESSION_ID.findall(result.stdout)
        old_messages = _messages(run_seri, old_id[0])
        resumed = run_seri("chat", "--resume", old_id[0], "-p", "back again", env=chat_env(fake))
        requests = fake.requests
    # The old id is printed (data on stdout, between the answers), and how to resume it.
    assert result.stdout.splitlines() == ["first answer", old_id[0], "second answer"]
    assert f"seri chat --resume {old_id[0]}" in result.stderr
    sessions = _sessions(run_seri)
    assert len(sessions) == 2
    assert old_id[0] in {s["id"] for s in sessions}
    project_dirs = {s["project"] for s in sessions}
    assert len(project_dirs) == 1  # the same project
    new_id = next(s["id"] for s in sessions if s["id"] != old_id[0])
    # Whole: every message of the old session is still there.
    assert [m["role"] for m in old_messages] == ["user", "assistant", "tool", "assistant"]
    assert [m["role"] for m in _messages(run_seri, new_id)] == ["user", "assistant"]
    # The new session starts empty: the second task's request has no trace of the first.
    second = requests[2]["messages"]
    assert [m["role"] for m in second] == ["system", "user"]
    # Resumable: the old conversation comes back intact.
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == "resumed answer\n"
    roles = [m["role"] for m in requests[3]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert requests[3]["messages"][1]["content"] == "first task"


class Terminal:
    """`seri chat` on a pseudo-terminal: it is the child's controlling terminal and its stdio."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str]) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: never returns
            try:
                os.chdir(cwd)
                os.execve(SERI, [SERI, *args], env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.output = ""
        self._seen = 0

    def _ready(self, timeout: float) -> bool:
        # poll, not select: select() refuses a descriptor numbered 1,024 or more, which a
        # long-lived xdist worker can reach.
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        return bool(poller.poll(timeout * 1000))

    def _read(self, timeout: float) -> bool:
        if not self._ready(timeout):
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not data:
            return False
        self.output += data.decode("utf-8", "replace")
        return True

    def expect(self, text: str, timeout: float = 20) -> str:
        """Wait until ``text`` appears after what earlier calls consumed; returns the output up
        to and including it."""
        deadline = time.monotonic() + timeout
        while text not in self.output[self._seen :]:
            if time.monotonic() > deadline or not self._read(0.1):
                if text in self.output[self._seen :]:
                    break
                raise AssertionError(f"never saw {text!r}; the terminal shows:\n{self.output}")
        end = self.output.index(text, self._seen) + len(text)
        chunk, self._seen = self.output[self._seen : end], end
        return chunk

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\r")

    def wait(self, timeout: float = 20) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.05)
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                while self._read(0.05) and self._ready(0):
                    pass
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        raise AssertionError(f"seri did not exit; the terminal shows:\n{self.output}")


def _terminal_env(seri_home: Path, fake: FakeModel) -> dict[str, str]:
    return seri_env(seri_home, {**chat_env(fake), "TERM": "dumb", "COLUMNS": "200"})


def test_the_interactive_loop_on_a_terminal(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "write_file", path="hello.txt", content="hello\n")]},
        {"text": "I wrote hello.txt."},
    ]
    with FakeModel(script) as fake:
        term = Terminal(["chat", "--allow", "write_file"], project, _terminal_env(seri_home, fake))
        term.expect(PROMPT)
        term.type("write hello.txt")
        answered = term.expect(PROMPT)
        term.type("/clear")
        cleared = term.expect(PROMPT)
        term.type("/exit")
        status = term.wait()
        calls = len(fake.requests)
    assert status == 0, term.output
    assert calls == 2
    # The answer streams to the terminal; the new session is announced there.
    assert "I wrote hello.txt." in answered
    assert "new session" in answered
    assert (project / "hello.txt").read_bytes() == b"hello\n"
    assert "Started a new session" in cleared
    sessions = _sessions(run_seri)
    assert len(sessions) == 1  # the session after /clear starts when its first task does
    assert sessions[0]["id"] in cleared
    assert [m["role"] for m in _messages(run_seri, sessions[0]["id"])] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]


def test_a_tool_that_needs_approval_is_asked_on_the_terminal(
    project: Path, seri_home: Path
) -> None:
    (project / "why.txt").write_text("old line\n")
    script: list[dict[str, Any]] = [
        {"tool_calls": [call("w1", "write_file", path="no.txt", content="no\n")]},
        {"tool_calls": [call("w2", "write_file", path="why.txt", content="new line\n")]},
        {"tool_calls": [call("w3", "write_file", path="yes.txt", content="yes\n")]},
        {"text": "one of three"},
    ]
    with FakeModel(script) as fake:
        term = Terminal(["chat"], project, _terminal_env(seri_home, fake))
        term.expect(PROMPT)
        term.type("write three files")
        first = term.expect("allow? [1] ")
        term.type("n")
        second = term.expect("allow? [1] ")
        term.type("keep why.txt as it is")
        third = term.expect("allow? [1] ")
        term.type("y")
        term.expect(PROMPT)
        term.type("/exit")
        status = term.wait()
        denial = fake.requests[1]["messages"][-1]
        reasoned = fake.requests[2]["messages"][-1]
    assert status == 0, term.output
    # A new file shows its size and head; an existing one the diff; each offers "always".
    assert "? write_file  no.txt" in first and "new file no.txt: 3 B, 1 line" in first
    assert "2 always: write_file for this session" in first
    assert "-old line" in second and "+new line" in second
    assert "? write_file  yes.txt" in third
    assert denial["content"] == "denied by user"
    assert reasoned["content"] == "denied by user: keep why.txt as it is"
    assert "⊘ write_file  why.txt: denied by user: keep why.txt as it is" in third
    assert not (project / "no.txt").exists()
    assert (project / "why.txt").read_text() == "old line\n"
    assert (project / "yes.txt").read_bytes() == b"yes\n"


def test_rewind_and_memory_on_a_terminal(run_seri: RunSeri, project: Path, seri_home: Path) -> None:
    (project / "a.txt").write_bytes(b"original\n")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                call("w1", "write_file", path="a.txt", content="by seri\n"),
                call("m1", "remember", text="Likes short answers.", scope="project"),
            ]
        },
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        env = _terminal_env(seri_home, fake)
        term = Terminal(["chat", "--allow", "write_file", "--allow", "remember"], project, env)
        term.expect(PROMPT)
        term.type("change a.txt")
        term.expect(PROMPT)
        (project / "a.txt").write_bytes(b"edited by the person\n")
        term.type("/rewind")
        listed = term.expect(PROMPT)
        term.type("/rewind 1 files")
        asked = term.expect("[y/N] ")
        term.type("n")
        declined = term.expect(PROMPT)
        assert (project / "a.txt").read_bytes() == b"edited by the person\n"
        term.type("/rewind 1 files")
        term.expect("[y/N] ")
        term.type("y")
        term.expect(PROMPT)
        term.type("/memory pending")
        pending = term.expect(PROMPT)
        term.type("/memory approve 1")
        approved = term.expect(PROMPT)
        term.type("/exit")
        status = term.wait()
    assert status == 0, term.output
    assert "change a.txt" in listed and "[a.txt]" in listed and "not tracked" in listed
    assert "a.txt" in asked and "Overwrite?" in asked
    assert "Not overwritten. Nothing was changed." in declined
    assert (project / "a.txt").read_bytes() == b"original\n"
    assert "Likes short answers." in pending
    assert "next time seri starts" in approved
