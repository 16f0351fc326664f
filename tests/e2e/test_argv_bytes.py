"""Command-line arguments that are not UTF-8 (review-1, N10).

``seri compact --session $'\\xff'`` and ``seri pin --session S $'\\xff\\xfe'`` ended in
``internal error: UnicodeEncodeError``. Now: one line naming the argument, exit 2, and
nothing written. The installed `seri`, given the raw bytes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.inputs.argv_text import undecodable_argument
from tests.conftest import SERI, seri_env


def test_bytes_that_are_not_utf8_are_a_usage_error(project: Path, seri_home: Path) -> None:
    for argv in (
        [b"compact", b"--session", b"\xff"],
        [b"pin", b"--session", b"abc", b"\xff\xfe"],
        [b"chat", b"-p", b"caf\xe9"],
        [b"sessions", b"search", b"\xc3"],
        [b"\xff"],
    ):
        result = subprocess.run(
            [SERI.encode(), *argv],
            check=False,
            cwd=project,
            env=seri_env(seri_home, {"OPENROUTER_API_KEY": "sk-or-v1-" + "ab12" * 16}),
            capture_output=True,
            timeout=30,
        )
        stderr = result.stderr.decode("utf-8")
        assert result.returncode == 2, stderr
        assert "internal error" not in stderr
        (line,) = stderr.splitlines()
        bad = len(argv)
        shown = repr(argv[-1])[1:]
        assert line.startswith(f"seri: argument {bad} ({shown}) is not UTF-8 text"), line
    assert not (seri_home / "seri.db").exists()


@given(st.lists(st.binary(max_size=8), max_size=5))
def test_a_command_line_is_refused_exactly_when_an_argument_is_not_utf8(
    raw: list[bytes],
) -> None:
    argv = [os.fsdecode(arg) for arg in raw]
    problem = undecodable_argument(argv)
    valid = []
    for arg in raw:
        try:
            arg.decode("utf-8")
            valid.append(True)
        except UnicodeDecodeError:
            valid.append(False)
    assert bool(problem) == (not all(valid))
    if problem:
        problem.encode("utf-8")  # printable as it is
        assert problem.startswith(f"argument {valid.index(False) + 1} (")
