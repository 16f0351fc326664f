"""A command's process while it runs and how it ends: what the bash tool and hooks share.

Both start ``bash -c`` in a session of its own (``start_new_session``: its first process leads
its process group), most often under ``call_reaper`` (``seri.io.permissions.sandbox``), and both
read its pipes here as the output comes, each into a sink that keeps what it keeps in bounded
memory (a command printing without end costs no more than one printing a line), until the
pipes close or the time limit. Whatever the end (done, out of time, Ctrl-C), ``end_command``
ends the command with everything it started, detached or not.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping

# After the command itself exits, how long to keep reading from children it left
# running in the background before giving up on them.
BACKGROUND_GRACE_SECONDS = 1.0
# How long the reaper of a call (``call_reaper``) gets to end what the call started.
REAPER_GRACE_SECONDS = 5.0
_CHUNK = 65_536

# Where each pipe's output goes: its file descriptor, and what is fed each piece of it.
Readers = Mapping[int, Callable[[bytes], None]]


def pump(
    proc: subprocess.Popen[bytes], readers: Readers, deadline: float, stdin: bytes = b""
) -> tuple[bool, bool]:
    """Write ``stdin`` to the command (then close it) while reading its pipes until every
    one is closed or the deadline; say (timed out, abandoned background output)."""
    exited_at: float | None = None
    left = memoryview(stdin)
    with selectors.DefaultSelector() as selector:
        for fd in readers:
            selector.register(fd, selectors.EVENT_READ)
        writing = proc.stdin is not None and _start_writing(proc, selector, left)
        open_readers = len(readers)
        while open_readers or writing:
            now = time.monotonic()
            if now >= deadline:
                return True, False
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > BACKGROUND_GRACE_SECONDS:
                return False, True
            for key, _ in selector.select(timeout=min(deadline - now, 0.25)):
                if key.events & selectors.EVENT_WRITE:
                    left = _write_some(proc, selector, left)
                    writing = bool(left)
                    continue
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    selector.unregister(key.fd)
                    open_readers -= 1
                    continue
                readers[key.fd](chunk)
    return False, False


def _start_writing(
    proc: subprocess.Popen[bytes], selector: selectors.BaseSelector, data: memoryview
) -> bool:
    assert proc.stdin is not None
    if not data:
        proc.stdin.close()
        return False
    os.set_blocking(proc.stdin.fileno(), False)
    selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
    return True


def _write_some(
    proc: subprocess.Popen[bytes], selector: selectors.BaseSelector, data: memoryview
) -> memoryview:
    """As much of ``data`` as the pipe takes now; what is left (nothing once written, or
    once the command closed its end: what it did not read is its own business)."""
    assert proc.stdin is not None
    try:
        data = data[os.write(proc.stdin.fileno(), data) :]
    except BlockingIOError:
        return data
    except OSError:  # BrokenPipeError: the command stopped reading
        data = data[:0]
    if not data:
        selector.unregister(proc.stdin.fileno())
        with contextlib.suppress(OSError):
            proc.stdin.close()
    return data


def drain(proc: subprocess.Popen[bytes], readers: Readers) -> None:
    """After the end, take what is still in the pipes, without waiting long for it."""
    with contextlib.suppress(OSError, TimeoutError):
        pump(proc, readers, time.monotonic() + 1.0)


def end_command(proc: subprocess.Popen[bytes], *, reaped: bool = False) -> None:
    """End the command. Under ``call_reaper`` it is asked first (SIGTERM): it kills what the
    command started, detached or not, and exits; then the group goes, whatever is left of it.
    start_new_session made the first process a group leader: its pid is the group id."""
    if reaped:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=REAPER_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
