"""The README's quick start, run verbatim on a clean clone, as a newcomer would.

Slow (a fresh virtual environment: a few minutes), so it runs under `make test-quickstart`
(SERI_QUICKSTART=1), not in `make test`. The quick start is two commands, `make demo` and
`make test`; `make demo` runs as written, from the clone's root (`make test` is the whole
suite again). Then what the README names next: `.venv/bin/seri --version`, and `make try`
in a real terminal (tmux), where a message gets the tour and Ctrl-D leaves.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.tmux_terminal import TmuxTerminal

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    os.environ.get("SERI_QUICKSTART") != "1", reason="slow: make test-quickstart runs it"
)


def quick_start_commands(readme: str) -> list[str]:
    """The commands of the first ``sh`` block under "## Quick start", comments dropped."""
    section = readme.split("## Quick start", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None, "the quick start has no sh block"
    commands = [line.split("  #", 1)[0].strip() for line in block.group(1).splitlines()]
    return [command for command in commands if command]


def test_the_quick_start_works_verbatim_on_a_clean_clone(tmp_path: Path) -> None:
    clone = tmp_path / "seri"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    readme = (clone / "README.md").read_text()
    commands = quick_start_commands(readme)
    assert commands == ["make demo", "make test"]
    assert "`make try`" in readme and "`.venv/bin/seri`" in readme
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SERI_", "OPENROUTER_"))}
    env.pop("MAKEFLAGS", None)
    for command in ("make demo", ".venv/bin/seri --version"):
        done = subprocess.run(
            command,
            shell=True,
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
        said = done.stdout + done.stderr
        # Quiet: no setuptools sermons, nothing that reads like a failure.
        for alarming in ("Warning", "!!", "Traceback", "error"):
            assert alarming not in said, f"{command} said {alarming!r}:\n{said}"
        if command == "make demo":
            ledger = re.search(r"shell\s+\d+\s+(\d+) -> (\d+)", said)
            assert ledger is not None, said
            before, after = map(int, ledger.groups())
            assert after < before / 2  # the compaction visibly shrinks the history
        else:
            assert done.stdout.startswith("seri ")
    _try_in_a_terminal(clone, env)


def _try_in_a_terminal(clone: Path, env: dict[str, str]) -> None:
    with TmuxTerminal(clone, {**env, "TERM": "screen-256color"}, ("try",), "make") as terminal:
        terminal.wait_for_prompt()
        terminal.line("show me around")
        terminal.wait_for("allow? [1]")
        terminal.keys("Enter")
        terminal.wait_for("allow? [1]", 2)
        terminal.keys("Enter")
        terminal.wait_for("From here on this loopback model only repeats")
        terminal.wait_for_prompt(2)
        terminal.keys("C-d")
        assert terminal.exit_status() == 0, terminal.history()
        assert (clone / ".venv" / "bin" / "seri").exists()
