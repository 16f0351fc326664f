"""call_reaper, the first process of a bash call outside bubblewrap: bash's ending is
reported as it was (exit status, killing signal), and what bash leaves is gone after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from seri.io.permissions.sandbox import Sandbox, detect
from seri.io.tools.shell import run_bash

KINDS = [k for k in ("landlock", "none") if detect(k).kind == k]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
@pytest.mark.parametrize("kind", KINDS)
def test_bash_ends_as_it_ended_and_leaves_nothing(kind: str, tmp_path: Path) -> None:
    sandbox = Sandbox(detect(kind), tmp_path, (), choice=kind)
    try:
        assert sandbox.reaps

        def run(command: str) -> str:
            return run_bash(command, cwd=tmp_path, timeout=20, sandbox=sandbox).text

        assert run("echo x; exit 3").endswith("x\n[exit code 3]")
        assert run("kill -9 $$").endswith("[killed by signal SIGKILL]")
        assert run("kill -TERM $$").endswith("[killed by signal SIGTERM]")
        left = "setsid sh -c 'sleep 0.3; echo late > late.txt' >/dev/null 2>&1 & echo started"
        assert "started" in run(left)
        assert "[exit code 0]" in run("sleep 0.6")
        assert not (tmp_path / "late.txt").exists()
    finally:
        sandbox.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
@pytest.mark.parametrize("kind", KINDS)
def test_bash_starts_as_a_fresh_process_would(kind: str, tmp_path: Path) -> None:
    """The reaper is a fork of seri, not a new program: what it blocks and what seri set
    aside reach bash reset, so a pipe's reader that stops ends its writer with SIGPIPE (the
    reaper that was a new interpreter left SIGPIPE ignored: `yes | head -1` said "Broken
    pipe" and `yes` exited 1)."""
    sandbox = Sandbox(detect(kind), tmp_path, (), choice=kind)
    try:
        text = run_bash(
            "yes | head -1; echo ${PIPESTATUS[@]}; grep -E '^Sig(Blk|Ign)' /proc/self/status",
            cwd=tmp_path,
            timeout=20,
            sandbox=sandbox,
        ).text
    finally:
        sandbox.close()
    # What bash started by this process without seri shows (subprocess resets SIGPIPE and
    # SIGXFSZ; a signal the test process ignores is inherited either way, as in any shell),
    # less the signals the reaper answers, which bash always gets back at their defaults.
    blocked, ignored = subprocess.run(
        ["bash", "-c", "grep -E '^Sig(Blk|Ign)' /proc/self/status"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    answered = sum(1 << (number - 1) for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    fresh = int(ignored.split()[1], 16) & ~answered
    assert blocked == "SigBlk:\t0000000000000000", blocked
    assert text.splitlines()[:4] == ["y", "141 0", blocked, f"SigIgn:\t{fresh:016x}"], text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
@pytest.mark.parametrize("kind", KINDS)
def test_the_reaper_holds_none_of_seris_descriptors(kind: str, tmp_path: Path) -> None:
    """A fork of seri that never execs would keep every descriptor seri has open (the
    database, another call's pipe, which would then never end): it keeps only 0-2."""
    sandbox = Sandbox(detect(kind), tmp_path, (), choice=kind)
    held: list[set[str]] = []
    reader, writer = os.pipe()  # one of seri's own, open while the command runs

    def look(chunk: bytes) -> None:
        if not held:
            held.append(set(os.listdir(f"/proc/{int(chunk.split()[0])}/fd")))

    try:
        run_bash("echo $PPID; sleep 0.3", cwd=tmp_path, timeout=20, sandbox=sandbox, on_output=look)
    finally:
        sandbox.close()
        os.close(reader)
        os.close(writer)
    assert held == [{"0", "1", "2"}]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
@pytest.mark.parametrize("kind", KINDS)
def test_what_a_call_left_ends_when_seri_is_killed(kind: str, tmp_path: Path) -> None:
    """seri killed (SIGKILL) while a command runs: the reaper's death signal ends it and what
    it detached; the heartbeat stands still."""
    beat = tmp_path / "beat"
    command = (
        "setsid sh -c 'while :; do echo . >> beat; sleep 0.05; done' >/dev/null 2>&1 & sleep 300"
    )
    program = (
        "import sys; from pathlib import Path; from seri.io.permissions.sandbox import Sandbox, detect;"  # noqa: E501
        "from seri.io.tools.shell import run_bash; p = Path(sys.argv[1]);"
        f"run_bash(sys.argv[2], cwd=p, timeout=60, sandbox=Sandbox(detect({kind!r}), p, ()))"
    )
    seri = subprocess.Popen([sys.executable, "-c", program, str(tmp_path), command])
    try:
        deadline = time.monotonic() + 20
        while not (beat.exists() and beat.stat().st_size) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert beat.exists(), "the command never started"
    finally:
        seri.kill()
        seri.wait()
    time.sleep(0.3)
    size = beat.stat().st_size
    time.sleep(0.4)
    assert beat.stat().st_size == size
