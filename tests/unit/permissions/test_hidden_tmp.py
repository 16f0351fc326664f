"""What bubblewrap's private /tmp shows of the host's: a model's command sees none of it but
its person's PATH, a command of the person's own (``trusted``) also what it names."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from seri.io.permissions.sandbox import Sandbox, detect
from seri.io.tools.shell import run_bash

pytestmark = pytest.mark.skipif(
    detect("bubblewrap").kind != "bubblewrap", reason="bubblewrap cannot run here"
)


@pytest.fixture
def host_tmp() -> Iterator[Path]:
    made = Path(tempfile.mkdtemp(prefix="seri-host-", dir="/tmp"))
    (made / "bin").mkdir()
    tool = made / "bin" / "seri-test-tool"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    (made / "notes.txt").write_text("host secret notes\n")
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


@pytest.fixture
def bubblewrap(tmp_path: Path) -> Iterator[Sandbox]:
    project = tmp_path / "project"
    project.mkdir()
    made = Sandbox(detect("bubblewrap"), project, (), choice="bubblewrap")
    try:
        yield made
    finally:
        made.close()


def _run(sandbox: Sandbox, command: str, path: str, *, trusted: bool = False) -> str:
    env = {**os.environ, "PATH": path}
    done = run_bash(
        command, cwd=sandbox.project, timeout=20, sandbox=sandbox, env=env, trusted=trusted
    )
    return done.text


def test_a_models_command_still_sees_a_private_tmp(bubblewrap: Sandbox, host_tmp: Path) -> None:
    """Naming a host path under /tmp does not show it to the model's command: the escape
    fails (the file's text is not read), not merely errs."""
    text = _run(bubblewrap, f"cat {host_tmp}/notes.txt", os.environ["PATH"])
    assert "host secret notes" not in text and "No such file" in text
    assert host_tmp.name not in _run(bubblewrap, "ls -a /tmp", os.environ["PATH"])


def test_the_persons_path_under_tmp_is_seen_by_every_command(
    bubblewrap: Sandbox, host_tmp: Path
) -> None:
    """An activated virtual environment under /tmp: its bin directory is on the person's
    PATH, and the model's commands find the tools in it, read-only."""
    path = f"{host_tmp}/bin:{os.environ['PATH']}"
    text = _run(
        bubblewrap, "seri-test-tool; echo x > $(dirname $(command -v seri-test-tool))/w", path
    )
    assert "tool ran" in text
    assert not (host_tmp / "bin" / "w").exists()


def test_a_trusted_command_sees_what_it_names_under_tmp(
    bubblewrap: Sandbox, host_tmp: Path
) -> None:
    text = _run(bubblewrap, f"cat {host_tmp}/notes.txt", os.environ["PATH"], trusted=True)
    assert "host secret notes" in text
