"""Running `seri` inside the test process: the same `main(argv)` the installed program runs.

The compaction matrix drives a few hundred commands; starting a Python process for each would
cost more than the work itself. The command still runs whole (docopt, store, HTTP to the
loopback fake, real files): only the process is shared. The environment, working directory
and stdin are set for the call and put back afterwards; nothing of seri is replaced.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
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
    """The call's environment, directory and stdin; afterwards what a real seri leaves to its
    exit is undone: its signal dispositions (a `-p` run ignores SIGINT and SIGTERM once its
    result is out; kept, the test process would ignore Ctrl-C for every later test), the
    cycle collector's state, and the database connections it opened (2-3 descriptors each:
    a few hundred runs in one worker reach select()'s limit of 1,024)."""
    import apsw

    saved_env, saved_cwd, saved_stdin = dict(os.environ), os.getcwd(), sys.stdin
    saved_signals = {
        number: handler
        for number in signal.valid_signals()
        if (handler := signal.getsignal(number)) is not None
    }
    collecting = gc.isenabled()
    connections_before = {id(c) for c in apsw.connections()}
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
        for number, handler in saved_signals.items():
            with contextlib.suppress(OSError, ValueError):
                signal.signal(number, handler)
        if collecting:
            gc.enable()
        for connection in apsw.connections():
            # One still in use by a thread the command left working (a purge) is its to close.
            if id(connection) not in connections_before:
                with contextlib.suppress(apsw.ThreadingViolationError):
                    connection.close()


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
