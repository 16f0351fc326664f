"""`seri sessions` output on the three shared legacy fixtures, against reviewed golden
files in tests/golden/cli/.

Times are made deterministic: the fixtures' mtimes are fixed before the import (an
imported session is as old as its file) and TZ=UTC. Set SERI_REGEN_GOLDEN=1
(``make golden``) to rewrite the files instead of comparing, then review the diff.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SERI, seri_env
from tests.golden_files import check_golden
from tests.legacy_support import copy_fixtures

GOLDEN = Path(__file__).parents[2] / "golden" / "cli"
# 2026-03-01T09:00:00Z; the fixtures get this time plus 0, 60 and 120 s.
FIXED_MTIME = 1_772_355_600.0

# golden file -> the command whose output it holds ("stderr:" marks stderr).
COMMANDS: dict[str, tuple[str, ...]] = {
    "import_first_run_stderr": ("stderr:", "sessions", "--all"),
    "sessions_all": ("sessions", "--all"),
    "sessions_all_json": ("sessions", "--all", "--json"),
    "show_hello": ("sessions", "show", "a1b2c3d4-hello"),
    "show_tools": ("sessions", "show", "e5f6"),
    "show_tools_json": ("sessions", "show", "e5f6a7b8-tools", "--json"),
    "show_torn": ("sessions", "show", "c9d0"),
    "show_torn_json": ("sessions", "show", "c9d0", "--json"),
    "sessions_import": ("sessions", "import"),
    "show_ambiguous_stderr": ("stderr:", "sessions", "show", "e"),
    "search_human": ("sessions", "search", "tests", "--all"),
    "search_json": ("sessions", "search", "tests", "--all", "--json"),
    "search_fts_error_stderr": ("stderr:", "sessions", "search", "NEAR(", "--fts", "--all"),
    "search_nothing_stderr": ("stderr:", "sessions", "search", "zebra", "--all"),
    "export_markdown": ("sessions", "export", "e5f6", "--format", "markdown"),
    "export_atif": ("trajectory", "export", "--format", "atif", "--session", "e5f6"),
    "rm_without_yes_stderr": ("stderr:", "sessions", "rm", "e0000000"),
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("golden-cli")
    home, cwd = base / "profile", base / "elsewhere"
    cwd.mkdir()
    sessions = copy_fixtures(home, mtime=FIXED_MTIME)
    # A session of its own whose name starts like the others, for the ambiguity message.
    (sessions / "e0000000-other.jsonl").write_bytes(
        (sessions / "a1b2c3d4-hello.jsonl").read_bytes().replace(b"a1b2c3d4-hello", b"e0000000")
    )
    os.utime(sessions / "e0000000-other.jsonl", (FIXED_MTIME - 3600, FIXED_MTIME - 3600))
    results: dict[str, str] = {}
    for name, command in COMMANDS.items():
        want_stderr = command[0] == "stderr:"
        args = command[1:] if want_stderr else command
        done = subprocess.run(
            [SERI, *args],
            cwd=cwd,
            env=seri_env(home),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if want_stderr:
            results[name] = f"exit {done.returncode}\n{done.stderr}"
        else:
            assert done.returncode in (0, 1), (name, done.stderr)
            results[name] = done.stdout
    return results


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_golden_cli_output(outputs: dict[str, str], name: str) -> None:
    """The output matches its golden file byte for byte (or rewrites it on demand)."""
    check_golden(GOLDEN / f"{name}.txt", outputs[name])
