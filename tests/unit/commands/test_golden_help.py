"""`seri --help` and every subcommand's `--help`, against reviewed golden files in
tests/golden/help/.

The list of subcommands is main's own table, so a new command fails here until its help
text is generated (``make golden``, which sets SERI_REGEN_GOLDEN=1) and reviewed as a diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from seri.commands.main import COMMANDS
from tests.conftest import RunSeri
from tests.golden_files import check_golden

GOLDEN = Path(__file__).parents[2] / "golden" / "help"


@pytest.mark.parametrize("command", ["", *COMMANDS], ids=lambda c: c or "seri")
def test_golden_help_text(command: str, run_seri: RunSeri) -> None:
    """The help text matches its golden file byte for byte (or rewrites it on demand)."""
    args = (command, "--help") if command else ("--help",)
    done = run_seri(*args)
    assert (done.returncode, done.stderr) == (0, ""), (args, done.returncode, done.stderr)
    check_golden(GOLDEN / f"{command or 'seri'}.txt", done.stdout)


def test_every_golden_help_file_belongs_to_a_command() -> None:
    """A command that is renamed or removed takes its golden help text with it."""
    names = {"seri", *COMMANDS}
    assert {path.stem for path in GOLDEN.glob("*.txt")} <= names
