"""`seri --help` and every subcommand's `--help`, against reviewed golden files in
tests/golden/help/.

The list of subcommands is main's own table, so a new command fails here until its help
text is generated (``make golden``, which sets SERI_REGEN_GOLDEN=1) and reviewed as a diff.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from seri.commands.main import COMMANDS
from tests.conftest import SERI, seri_env

GOLDEN = Path(__file__).parent / "golden" / "help"


def _help(command: str, home: Path, cwd: Path) -> str:
    args = [command, "--help"] if command else ["--help"]
    done = subprocess.run(
        [SERI, *args],
        cwd=cwd,
        env=seri_env(home),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, ""), (args, done.returncode, done.stderr)
    return done.stdout


@pytest.mark.parametrize("command", ["", *COMMANDS], ids=lambda c: c or "seri")
def test_golden_help_text(command: str, seri_home: Path, project: Path) -> None:
    """The help text matches its golden file byte for byte (or rewrites it on demand)."""
    path = GOLDEN / f"{command or 'seri'}.txt"
    got = _help(command, seri_home, project)
    if os.environ.get("SERI_REGEN_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run `make golden` and review it"
    assert got == path.read_text(encoding="utf-8")


def test_every_golden_help_file_belongs_to_a_command() -> None:
    """A command that is renamed or removed takes its golden help text with it."""
    names = {"seri", *COMMANDS}
    assert {path.stem for path in GOLDEN.glob("*.txt")} <= names
