"""The bash tool: run one command in the project, bounded in time and memory.

The command runs as ``bash -c`` in a new session (so in its own process group,
with no controlling terminal to prompt on), stdin from /dev/null and no
inherited descriptors beyond 0-2 (so it can never hold seri's database open).
On timeout or Ctrl-C it is ended with everything it started
(``seri.io.tools.command_process``, which hooks share).

Output is read as a stream into ``seri.pure.tools.output_capture``, which keeps only
its head and tail in memory and decides what the model is shown. When a spill
directory is given, the complete output also goes to a 0600 file there, whose
path the model is told; it passes through ``redact`` (seri's secret redaction)
a line at a time first, since a file on disk is as much storage as the database.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from seri.io.compaction.spill import ready_spill_dir
from seri.io.tools.command_process import drain, end_command, pump
from seri.pure.tools.output_capture import (
    HEAD_BYTES,
    SEAM_REACH,
    OutputCapture,
    capped_output,
    token_seam_bytes,
)
from seri.pure.tools.tool_outcome import ToolOutcome, outcome

if TYPE_CHECKING:
    from seri.io.permissions.sandbox import Sandbox

SPILL_MAX_BYTES = 64 * 1024 * 1024
# A spilled line longer than this is written in pieces (cut between tokens where possible).
SPILL_LINE_LIMIT = 1 << 20


class _Sink(Protocol):
    def write(self, data: bytes, /) -> object: ...


class _RedactingSpill:
    """The spill file, written through ``redact`` a line at a time (a secret never spans
    lines); a line longer than SPILL_LINE_LIMIT goes out in pieces cut between tokens."""

    def __init__(self, out: BinaryIO, redact: Callable[[str], str]) -> None:
        self.out = out
        self.redact = redact
        self.pending = bytearray()

    def write(self, data: bytes) -> None:
        self.pending += data
        end = self.pending.rfind(b"\n")
        if end >= 0:
            self._emit(bytes(self.pending[: end + 1]))
            del self.pending[: end + 1]
        if len(self.pending) > SPILL_LINE_LIMIT:
            keep = token_seam_bytes(self.pending, len(self.pending) - SEAM_REACH)
            self._emit(bytes(self.pending[:keep]))
            del self.pending[:keep]

    def _emit(self, data: bytes) -> None:
        text = data.decode("utf-8", "surrogateescape")
        self.out.write(self.redact(text).encode("utf-8", "surrogateescape"))

    def close(self) -> None:
        if self.pending:
            self._emit(bytes(self.pending))
            self.pending.clear()
        self.out.close()


class _Tee:
    """Each chunk into the capture and, up to SPILL_MAX_BYTES, into the spill file."""

    def __init__(
        self,
        capture: OutputCapture,
        spill: _Sink | None,
        watch: Callable[[bytes], None] | None = None,
    ) -> None:
        self.capture = capture
        self.spill = spill
        self.spilled = 0
        self.watch = watch

    def feed(self, chunk: bytes) -> None:
        if self.spill is not None and self.spilled < SPILL_MAX_BYTES:
            part = chunk[: SPILL_MAX_BYTES - self.spilled]
            self.spill.write(part)
            self.spilled += len(part)
        self.capture.feed(chunk)
        if self.watch is not None:
            self.watch(chunk)


def run_bash(
    command: str,
    *,
    cwd: Path,
    timeout: float,
    spill_dir: Path | None = None,
    redact: Callable[[str], str] | None = None,
    max_bytes: int | None = None,
    sandbox: Sandbox | None = None,
    env: Mapping[str, str] | None = None,
    on_output: Callable[[bytes], None] | None = None,
    trusted: bool = False,
) -> ToolOutcome:
    """Run ``command``; the outcome carries the capped output and the exit status.

    ``redact`` is applied to what goes into the spill file (the caller redacts the
    outcome's text itself). ``max_bytes`` lowers the head and tail kept (the window's cap
    on one result), half each. ``sandbox`` confines what the command may write (see
    ``seri.io.permissions.sandbox``); ``env`` is its whole environment (the caller leaves secrets
    out);
    ``on_output`` sees each piece of output as it comes (a person watching it run);
    ``trusted``: the command is the person's own (a goal's check), not the model's, and sees
    what it names under the host's /tmp (``Sandbox.confined``).

    KeyboardInterrupt while waiting kills the process group and is re-raised,
    so the caller can record the call as interrupted.
    """
    child_env = dict(os.environ if env is None else env)
    with contextlib.ExitStack() as stack:
        argv, preexec = ["bash", "-c", command], None
        if sandbox is not None:
            # The stand-ins for absent protected paths stay until the command has ended.
            argv, preexec, child_env = stack.enter_context(
                sandbox.confined(command, cwd, child_env, trusted=trusted)
            )
        return _run(
            (argv, preexec, child_env),
            cwd=cwd,
            timeout=timeout,
            spill_dir=spill_dir,
            redact=redact,
            max_bytes=max_bytes,
            sandbox=sandbox,
            on_output=on_output,
        )


def _run(
    started_as: tuple[list[str], Callable[[], None] | None, dict[str, str]],
    *,
    cwd: Path,
    timeout: float,
    spill_dir: Path | None,
    redact: Callable[[str], str] | None,
    max_bytes: int | None,
    sandbox: Sandbox | None,
    on_output: Callable[[bytes], None] | None,
) -> ToolOutcome:
    started = time.monotonic()
    argv, preexec, child_env = started_as
    reaped = sandbox is not None and sandbox.reaps
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
            env=child_env,
            preexec_fn=preexec,  # noqa: PLW1509 - Landlock must be applied between fork and exec
        )
    except subprocess.SubprocessError as exc:
        kind = sandbox.kind if sandbox is not None else "none"
        return outcome(
            f"the command did not run: the {kind} sandbox could not be set up ({exc}); "
            "SERI_SANDBOX=none runs commands without one",
            is_error=True,
            exit_code=None,
            sandbox_failed=True,
        )
    assert proc.stdout is not None
    spill_path: Path | None = None
    spill: BinaryIO | _RedactingSpill | None = None
    try:
        spill_path, spill_file = _open_spill(spill_dir)
        spill = spill_file
        if spill_file is not None and redact is not None:
            spill = _RedactingSpill(spill_file, redact)
        half = HEAD_BYTES if max_bytes is None else max(256, min(HEAD_BYTES, max_bytes // 2))
        capture = OutputCapture(half, half)
        tee = _Tee(capture, spill, on_output)
        readers = {proc.stdout.fileno(): tee.feed}
        timed_out, abandoned = pump(proc, readers, started + timeout)
        if timed_out:
            end_command(proc, reaped=reaped)
            drain(proc, readers)
        proc.wait()
    except BaseException:
        end_command(proc, reaped=reaped)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        raise
    finally:
        proc.stdout.close()
        if spill is not None:
            spill.close()
    if spill_path is not None and capture.shown_whole:
        spill_path.unlink(missing_ok=True)  # the model saw all of it
        spill_path = None
    return _outcome(
        capture,
        proc.returncode,
        timed_out=timed_out,
        abandoned=abandoned,
        timeout=timeout,
        spill_path=spill_path,
        seconds=time.monotonic() - started,
    )


def _open_spill(spill_dir: Path | None) -> tuple[Path | None, BinaryIO | None]:
    if spill_dir is None:
        return None, None
    if not ready_spill_dir(spill_dir):
        return None, None
    try:
        path = spill_dir / f"bash-{os.urandom(8).hex()}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError:
        return None, None  # a spill is a convenience; the capped output still goes out
    return path, os.fdopen(fd, "wb")


def _outcome(
    capture: OutputCapture,
    returncode: int,
    *,
    timed_out: bool,
    abandoned: bool,
    timeout: float,
    spill_path: Path | None,
    seconds: float,
) -> ToolOutcome:
    capped = capped_output(capture, str(spill_path) if spill_path else "")
    notes: list[str] = []
    if capture.has_nul:
        notes.append("[the output contains binary data (NUL bytes), shown as �]")
    elif capped.invalid_utf8:
        notes.append("[the output is not valid UTF-8; undecodable bytes are shown as �]")
    if abandoned:
        notes.append(
            "[processes left running in the background still hold the output open; "
            "seri stopped reading. Redirect their output to a file.]"
        )
    if timed_out:
        status = f"[timed out after {timeout:g} s; the command and its children were killed]"
    elif returncode < 0:
        status = f"[killed by signal {_signal_name(-returncode)}]"
    else:
        status = f"[exit code {returncode}]"
    shown = capped.text.removesuffix("\n") if capture.total else "(no output)"
    text = "\n".join([shown, *notes, status])
    return outcome(
        text,
        is_error=timed_out or returncode != 0,
        exit_code=None if timed_out else returncode,
        timed_out=timed_out,
        bytes_total=capture.total,
        lines_total=capture.lines,
        truncated=capped.truncated,
        binary=capture.has_nul,
        invalid_utf8=capped.invalid_utf8,
        background_left=abandoned,
        spill_path=str(spill_path) if spill_path else None,
        seconds=round(seconds, 3),
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
