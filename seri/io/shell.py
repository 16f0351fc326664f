"""The bash tool: run one command in the project, bounded in time and memory.

The command runs as ``bash -c`` in a new session (so in its own process group,
with no controlling terminal to prompt on), stdin from /dev/null and no
inherited descriptors beyond 0-2 (so it can never hold seri's database open).
On timeout or Ctrl-C the whole group gets SIGKILL, grandchildren included.

Output is read as a stream. Only the first and last ``HEAD_BYTES`` /
``TAIL_BYTES`` are kept in memory, with totals counted, so ``yes`` for an
hour costs the same memory as ``true``. When a spill directory is given, the
complete output also goes to a 0600 file there, whose path the model is told;
it passes through ``redact`` (seri's secret redaction) a line at a time first,
since a file on disk is as much storage as the database.

Where the head or the tail is cut out of a longer line, the cut moves to the
nearest character that cannot be part of a key or token, so that no secret is
ever shown (or stored) in two halves that redaction cannot recognise.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import secrets
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from seri.pure.tool_outcome import ToolOutcome, outcome

if TYPE_CHECKING:
    from seri.io.sandbox import Sandbox

HEAD_BYTES = 25_000
TAIL_BYTES = 25_000
HEAD_LINES = 1_000
TAIL_LINES = 1_000
SPILL_MAX_BYTES = 64 * 1024 * 1024
# After bash itself exits, how long to keep reading from children it left
# running in the background before giving up on them.
BACKGROUND_GRACE_SECONDS = 1.0
_CHUNK = 65_536
# A spilled line longer than this is written in pieces (cut between tokens where possible).
SPILL_LINE_LIMIT = 1 << 20
# How far a cut may move to avoid splitting a token (a key is far shorter).
SEAM_REACH = 512
# Characters a key, a token or an Authorization value can be made of.
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9_\-.~+/=:]")


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
            keep = _token_seam_bytes(self.pending, len(self.pending) - SEAM_REACH)
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


def _token_seam_bytes(data: bytearray, near: int) -> int:
    """A cut at or before ``near`` that splits no token (``near`` if none is close)."""
    for index in range(near, max(near - SEAM_REACH, 0), -1):
        if not _TOKEN_CHAR.match(chr(data[index - 1])):
            return index
    return near


class _Capture:
    """Head and tail of a byte stream, with totals, in bounded memory."""

    def __init__(
        self, spill: _Sink | None, head_bytes: int = HEAD_BYTES, tail_bytes: int = TAIL_BYTES
    ) -> None:
        self.head_bytes = head_bytes
        self.tail_bytes = tail_bytes
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.newlines = 0
        self.last_byte = b""
        self.has_nul = False
        self.dropped = False
        self.spill = spill
        self.spilled = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.newlines += chunk.count(b"\n")
        self.has_nul = self.has_nul or b"\0" in chunk
        self.last_byte = chunk[-1:]
        if self.spill is not None and self.spilled < SPILL_MAX_BYTES:
            part = chunk[: SPILL_MAX_BYTES - self.spilled]
            self.spill.write(part)
            self.spilled += len(part)
        room = self.head_bytes - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            excess = len(self.tail) - self.tail_bytes
            if excess > 0:
                del self.tail[:excess]
                self.dropped = True

    @property
    def lines(self) -> int:
        return self.newlines + (1 if self.last_byte not in (b"", b"\n") else 0)


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
) -> ToolOutcome:
    """Run ``command``; the outcome carries the capped output and the exit status.

    ``redact`` is applied to what goes into the spill file (the caller redacts the
    outcome's text itself). ``max_bytes`` lowers the head and tail kept (the window's cap
    on one result), half each. ``sandbox`` confines what the command may write (see
    ``seri.io.sandbox``); ``env`` is its whole environment (the caller leaves secrets out).

    KeyboardInterrupt while waiting kills the process group and is re-raised,
    so the caller can record the call as interrupted.
    """
    started = time.monotonic()
    argv: list[str] = ["bash", "-c", command]
    preexec: Callable[[], None] | None = None
    child_env = dict(os.environ if env is None else env)
    if sandbox is not None:
        argv, preexec, child_env = sandbox.command(command, cwd, child_env)
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
        capture = _Capture(spill, half, half)
        timed_out, abandoned = _pump(proc, capture, started + timeout)
        if timed_out:
            _kill_group(proc)
            _drain(proc, capture)
        proc.wait()
    except BaseException:
        _kill_group(proc)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)
        raise
    finally:
        proc.stdout.close()
        if spill is not None:
            spill.close()
    if spill_path is not None and not (capture.dropped or capture.lines > HEAD_LINES + TAIL_LINES):
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


def _pump(proc: subprocess.Popen[bytes], capture: _Capture, deadline: float) -> tuple[bool, bool]:
    """Read until EOF or the deadline; say (timed out, abandoned background output)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            now = time.monotonic()
            if now >= deadline:
                return True, False
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > BACKGROUND_GRACE_SECONDS:
                return False, True
            if selector.select(timeout=min(deadline - now, 0.25)):
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    return False, False
                capture.feed(chunk)


def _drain(proc: subprocess.Popen[bytes], capture: _Capture) -> None:
    """After a kill, take what is still in the pipe, without waiting long for it."""
    with contextlib.suppress(OSError, TimeoutError):
        _pump(proc, capture, time.monotonic() + 1.0)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    # start_new_session made the shell a group leader: its pid is the group id.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _open_spill(spill_dir: Path | None) -> tuple[Path | None, BinaryIO | None]:
    if spill_dir is None:
        return None, None
    try:
        spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = spill_dir / f"bash-{secrets.token_hex(8)}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    except OSError:
        return None, None  # a spill is a convenience; the capped output still goes out
    return path, os.fdopen(fd, "wb")


def _outcome(
    capture: _Capture,
    returncode: int,
    *,
    timed_out: bool,
    abandoned: bool,
    timeout: float,
    spill_path: Path | None,
    seconds: float,
) -> ToolOutcome:
    body, invalid, omitted_bytes, omitted_lines = _render(capture)
    notes: list[str] = []
    if capture.has_nul:
        notes.append("[the output contains binary data (NUL bytes), shown as �]")
    elif invalid:
        notes.append("[the output is not valid UTF-8; undecodable bytes are shown as �]")
    where = f"; the full output is in {spill_path}" if spill_path else ""
    marker = (
        (
            f"\n[… {omitted_bytes} bytes / {omitted_lines} lines omitted of {capture.total} "
            f"bytes / {capture.lines} lines{where} …]\n"
        )
        if omitted_bytes or omitted_lines
        else "\n"
    )
    body = body.replace(_GAP, marker)
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
    shown = body.removesuffix("\n") if capture.total else "(no output)"
    text = "\n".join([shown, *notes, status])
    return outcome(
        text,
        is_error=timed_out or returncode != 0,
        exit_code=None if timed_out else returncode,
        timed_out=timed_out,
        bytes_total=capture.total,
        lines_total=capture.lines,
        truncated=bool(omitted_bytes or omitted_lines),
        binary=capture.has_nul,
        invalid_utf8=invalid,
        background_left=abandoned,
        spill_path=str(spill_path) if spill_path else None,
        seconds=round(seconds, 3),
    )


_GAP = "\x00GAP\x00"  # stands for the omitted middle until the marker is known


def _render(capture: _Capture) -> tuple[str, bool, int, int]:
    """Decode head and tail; return (text, invalid UTF-8, omitted bytes, omitted lines)."""
    if not capture.dropped:
        text, invalid = _decode(bytes(capture.head + capture.tail))
        head_text, tail_text, omitted_lines = _cap_lines(text)
        if not omitted_lines:
            return text, invalid, 0, 0
        omitted_bytes = len(text.encode()) - len(head_text.encode()) - len(tail_text.encode())
        return head_text + _GAP + tail_text, invalid, omitted_bytes, omitted_lines
    head, tail = bytes(capture.head), bytes(capture.tail)
    # Cut at character boundaries so the seams do not show as decoding errors.
    head_text, head_bad = _decode(head, final=False)
    tail = _skip_continuation_bytes(tail)
    tail_text, tail_bad = _decode(tail)
    # ... and between tokens, so no key is shown in halves that redaction cannot see.
    head_text = head_text[: _head_seam(head_text)]
    tail_text = tail_text[_tail_seam(tail_text) :]
    ending = "\n" if tail_text.endswith("\n") else ""
    head_lines = head_text.split("\n")
    if head_text.endswith("\n"):
        head_lines.pop()  # the head ends exactly at a line end; no partial line
    tail_lines = tail_text.removesuffix(ending).split("\n")
    extra_head = max(0, len(head_lines) - HEAD_LINES)
    extra_tail = max(0, len(tail_lines) - TAIL_LINES)
    kept_head = "\n".join(head_lines[:HEAD_LINES])
    kept_tail = "\n".join(tail_lines[extra_tail:]) + ending
    shown_bytes = len(kept_head.encode()) + len(kept_tail.encode())
    omitted_bytes = max(0, capture.total - shown_bytes)
    omitted_lines = max(
        0,
        capture.newlines - head.count(b"\n") - tail.count(b"\n") + extra_head + extra_tail,
    )
    return kept_head + _GAP + kept_tail, head_bad or tail_bad, omitted_bytes, omitted_lines


def _head_seam(text: str) -> int:
    """Where a head cut out of a longer stream should end: not inside a token."""
    if not text or not _TOKEN_CHAR.match(text[-1]):
        return len(text)
    for index in range(len(text) - 1, max(len(text) - SEAM_REACH, 0) - 1, -1):
        if not _TOKEN_CHAR.match(text[index]):
            return index + 1
    return len(text)


def _tail_seam(text: str) -> int:
    """Where a tail cut out of a longer stream should start: not inside a token."""
    for index in range(min(len(text), SEAM_REACH)):
        if not _TOKEN_CHAR.match(text[index]):
            return index
    return 0


def _cap_lines(text: str) -> tuple[str, str, int]:
    """Split very many short lines into kept head, kept tail and the count between."""
    ending = "\n" if text.endswith("\n") else ""
    lines = text.removesuffix(ending).split("\n")
    if len(lines) <= HEAD_LINES + TAIL_LINES:
        return text, "", 0
    head = "\n".join(lines[:HEAD_LINES])
    tail = "\n".join(lines[-TAIL_LINES:]) + ending
    return head, tail, len(lines) - HEAD_LINES - TAIL_LINES


def _decode(data: bytes, *, final: bool = True) -> tuple[str, bool]:
    strict = codecs.getincrementaldecoder("utf-8")("strict")
    try:
        text = strict.decode(data, final=final)
        invalid = False
    except UnicodeDecodeError:
        lenient = codecs.getincrementaldecoder("utf-8")("replace")
        text = lenient.decode(data, final=final)
        invalid = True
    return text.replace("\x00", "\ufffd"), invalid


def _skip_continuation_bytes(data: bytes) -> bytes:
    i = 0
    while i < min(3, len(data)) and data[i] & 0xC0 == 0x80:
        i += 1
    return data[i:]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
