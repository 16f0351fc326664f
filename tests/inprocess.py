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
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import attrs

# How long a call's own threads get to end before its environment is put back.
THREAD_WAIT = 5.0


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
    threads_before = set(threading.enumerate())
    for key in [k for k in os.environ if k.startswith("SERI_") or k == "OPENROUTER_API_KEY"]:
        del os.environ[key]
    os.environ.update({"TZ": "UTC", **env})
    os.chdir(cwd)
    sys.stdin = io.StringIO(stdin)
    try:
        yield
    finally:
        _wait_for_seris_threads(threads_before)
        _restore_environment(saved_env)
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


def _wait_for_seris_threads(before: set[threading.Thread]) -> None:
    """Stop the call's purges as its exit would, and let its other threads (the background
    import, a window lookup) end, before the environment is put back. Putting it back is
    unsetenv and putenv on the C environment, and adding a variable can move the array a
    thread in glibc's getenv is reading: SQLite asks for SQLITE_TMPDIR and TMPDIR whenever
    it needs a temporary file, a purge's DELETE included, and a pytest worker died of SIGSEGV
    in getenv that way (CI, 2026-12-06). A real seri never changes its environment; only this
    shared process does."""
    from seri.io.compaction.eviction_purge import stop_all

    stop_all()  # as the command's exit would: a purge stops after the step under way
    deadline = time.monotonic() + THREAD_WAIT
    for thread in set(threading.enumerate()) - before:
        if thread.name.startswith("seri-"):
            thread.join(max(0.0, deadline - time.monotonic()))


def _restore_environment(saved: Mapping[str, str]) -> None:
    """Only the variables the call changed are put back: each change is a putenv or unsetenv,
    and the fewer there are, the shorter the time a thread of the test's own (the fake
    model's) could meet one in getenv."""
    for key in [key for key in os.environ if key not in saved]:
        del os.environ[key]
    for key, value in saved.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


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
