"""call_reaper, the first process of a bash call outside bubblewrap: bash's ending is
reported as it was (exit status, killing signal), and what bash leaves is gone after."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from seri.io.sandbox import Sandbox, detect
from seri.io.shell import run_bash

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
