"""Running `seri` inside the test process: the same `main(argv)` the installed program runs.

The compaction matrix drives a few hundred commands; starting a Python process for each would
cost more than the work itself. The command still runs whole (docopt, store, HTTP to the
loopback fake, real files): only the process is shared. The environment, working directory
and stdin are set for the call and put back afterwards; nothing of seri is replaced.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import attrs


@attrs.frozen
class Ran:
    code: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _process_state(env: Mapping[str, str], cwd: Path, stdin: str) -> Iterator[None]:
    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    for key in [k for k in os.environ if k.startswith("SERI_") or k == "OPENROUTER_API_KEY"]:
        del os.environ[key]
    os.environ.update({"TZ": "UTC", **env})
    os.chdir(cwd)
    sys.stdin = io.StringIO(stdin)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.stdin = saved_stdin


def run_seri_here(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, stdin: str = ""
) -> Ran:
    """``seri ARGV`` in this process, with ``env`` (SERI_HOME and the like) and ``cwd``."""
    from seri.commands.main import main

    # Byte-backed, as a real stdout is: some commands write to sys.stdout.buffer.
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.StringIO()
    with (
        _process_state(env, cwd, stdin),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(list(argv))
    out.flush()
    written = out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    return Ran(code, written, err.getvalue())
