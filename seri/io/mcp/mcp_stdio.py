"""An MCP server as a child process, spoken to in newline-delimited JSON-RPC over its pipes.

The server runs in a session of its own (its own process group, no controlling terminal),
with stdin and stdout as the message pipes and stderr kept in a small ring for error messages
(never shown on seri's terminal: servers log freely there). Two daemon threads read: one takes
stdout apart into messages and hands each response to the request waiting for it, answers the
server's own requests (``ping``; anything else is refused, since seri offers no sampling,
elicitation or roots), and passes notifications on; the other drains stderr so a chatty server
never blocks on a full pipe.

Lines are read with ``seri.pure.inputs.bounded_input``'s bounds: a line longer than the message
limit is dropped as it streams in (its memory is never held), and one nested deeper than seri's
depth limit is not parsed; since the id of either cannot be read, every request then waiting
fails at once with a message naming the limit, and the reader goes on. Lines that are not
JSON (a server printing logs to stdout) are counted and skipped.

When the process ends, every waiting request fails at once with its exit status and the end of
its stderr. ``close`` follows the spec's order: close stdin, wait, SIGTERM, wait, SIGKILL, each
to the whole process group (``npx`` starts node as a child).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import attrs

from seri.io.mcp.mcp_transport import (
    CANCELLED,
    DEFAULT_MAX_MESSAGE_BYTES,
    EXITED,
    OVERSIZED,
    TIMEOUT,
    Answer,
    Failure,
    McpRequest,
    NotificationSink,
    PendingRequests,
    tail_text,
    wait_for,
)
from seri.pure.inputs.bounded_input import MCP_STDIO, LineSplitter, OverlongLine, message_too_big
from seri.pure.mcp import jsonrpc
from seri.pure.mcp.jsonrpc import (
    ErrorResponse,
    Notification,
    Response,
    ServerRequest,
    Unreadable,
)

STDERR_KEEP_BYTES = 8 * 1024
_READ_CHUNK = 65_536
# How long each step of close() waits for the process to go.
CLOSE_GRACE_SECONDS = 2.0


class StdioTransport:
    """One server process. ``start`` spawns it; ``request`` may be called from any thread."""

    def __init__(
        self,
        command: str,
        args: tuple[str, ...],
        *,
        env: Mapping[str, str],
        cwd: Path | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_notification: NotificationSink | None = None,
        on_exit: Callable[[StdioTransport], None] | None = None,
    ) -> None:
        self._argv = [command, *args]
        self._env = dict(env)
        self._cwd = cwd
        self._limits = attrs.evolve(
            MCP_STDIO, max_line_bytes=max_message_bytes, max_message_bytes=max_message_bytes
        )
        self._on_notification = on_notification
        self._on_exit = on_exit
        self._pending = PendingRequests()
        self._write_lock = threading.Lock()
        self._stderr = bytearray()
        self._stderr_lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None
        self._drainer: threading.Thread | None = None
        self._unreadable = 0
        self._last_unreadable = ""
        self._exit_note = ""

    # --- life ---------------------------------------------------------------------------------

    def start(self) -> Failure | None:
        if self._cwd is not None and not self._cwd.is_dir():
            # Popen would blame the program for a missing working directory.
            return self._refuse(f"cannot start {self._argv[0]!r}: its cwd {self._cwd} is missing")
        try:
            self._proc = subprocess.Popen(
                self._argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env,
                cwd=self._cwd,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )
        except FileNotFoundError as exc:
            if self._cwd is not None and exc.filename == str(self._cwd):
                return self._refuse(
                    f"cannot start {self._argv[0]!r}: its cwd {self._cwd} is missing"
                )
            return self._refuse(f"cannot start {self._argv[0]!r}: no such program (is it on PATH?)")
        except PermissionError:
            return self._refuse(f"cannot start {self._argv[0]!r}: permission denied")
        except NotADirectoryError:
            return self._refuse(
                f"cannot start {self._argv[0]!r}: its cwd {self._cwd} is not a directory"
            )
        except OSError as exc:
            return self._refuse(f"cannot start {self._argv[0]!r}: {exc.strerror or exc}")
        assert self._proc.stdout is not None
        assert self._proc.stderr is not None
        self._reader = _daemon(self._read_stdout, self._proc.stdout, "mcp-stdout")
        self._drainer = _daemon(self._drain_stderr, self._proc.stderr, "mcp-stderr")
        return None

    def _refuse(self, message: str) -> Failure:
        failure = Failure(EXITED, message)
        self._pending.fail_all(failure, final=True)
        return failure

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._exit_note == ""

    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def set_protocol_version(self, version: str) -> None:
        """stdio carries no version header: nothing to do."""

    def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        if not _waited(proc, CLOSE_GRACE_SECONDS):
            _signal_group(proc, signal.SIGTERM)
            if not _waited(proc, CLOSE_GRACE_SECONDS):
                _signal_group(proc, signal.SIGKILL)
                _waited(proc, CLOSE_GRACE_SECONDS)
        # Children the server left behind hold no pipe of ours once the group is gone.
        _signal_group(proc, signal.SIGKILL)
        self._pending.fail_all(Failure(EXITED, "the connection was closed"), final=True)
        for thread in (self._reader, self._drainer):
            if thread is not None:
                thread.join(timeout=CLOSE_GRACE_SECONDS)

    def diagnostics(self) -> str:
        """What went wrong on the server's side, as far as can be seen: stderr, stray output."""
        with self._stderr_lock:
            stderr = tail_text(self._stderr, STDERR_KEEP_BYTES)
        notes = [self._exit_note] if self._exit_note else []
        if stderr:
            notes.append(f"its stderr ends: {stderr[-1200:]}")
        if self._unreadable:
            notes.append(
                f"{self._unreadable} line(s) on stdout were not JSON-RPC, the last: "
                f"{self._last_unreadable[:160]!r}"
            )
        return "; ".join(notes)

    # --- messages -----------------------------------------------------------------------------

    def request(self, call: McpRequest) -> Answer:
        opened = self._pending.open()
        if isinstance(opened, Failure):
            return opened
        request_id, slot = opened
        failure = self._write(jsonrpc.request(request_id, call.method, call.params))
        if failure is not None:
            self._pending.drop(request_id)
            return failure
        answer = wait_for(slot, time.monotonic() + call.timeout, call.cancel)
        if isinstance(answer, str):
            self._pending.drop(request_id)
            timed_out = answer == TIMEOUT
            reason = "timed out" if timed_out else "cancelled"
            self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason})
            if timed_out:
                return Failure(TIMEOUT, f"no answer to {call.method} within {call.timeout:g} s")
            return Failure(CANCELLED, f"{call.method} was cancelled")
        return answer

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self._write(jsonrpc.notification(method, params))

    def _write(self, message: Mapping[str, Any]) -> Failure | None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            return Failure(EXITED, "the server was never started")
        data = jsonrpc.encode(message)
        try:
            with self._write_lock:
                proc.stdin.write(data)
                proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            return Failure(EXITED, self._exit_message())
        return None

    def _read_stdout(self, stream: IO[bytes]) -> None:
        lines = LineSplitter(self._limits.max_line_bytes)
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            # A message can answer only a request sent before its bytes were read: one the
            # reader is still going through when the next call is sent must not fail that call.
            sent = self._pending.last_id()
            for line in lines.feed(chunk):
                if isinstance(line, OverlongLine):
                    self._over_limit(message_too_big(self._limits).reason, sent)
                else:
                    self._dispatch(line, sent)
        self._ended()

    def _over_limit(self, what: str, sent: int) -> None:
        """A message seri would not read: whichever request it answered gets no other
        answer, so every request waiting that it could answer (those sent by the time it
        was read, ids up to ``sent``) fails now rather than at its timeout."""
        self._pending.fail_all(
            Failure(OVERSIZED, f"the server sent {what}, which was dropped"),
            final=False,
            up_to=sent,
        )

    def _dispatch(self, line: bytes, sent: int) -> None:
        for message in jsonrpc.decode_line(line, self._limits):
            if isinstance(message, Response | ErrorResponse):
                if message.id is not None:
                    self._pending.answer(message.id, message)
            elif isinstance(message, Notification):
                if self._on_notification is not None:
                    self._on_notification(message)
            elif isinstance(message, ServerRequest):
                self._answer_server(message)
            elif isinstance(message, Unreadable):
                self._unreadable += 1
                self._last_unreadable = message.sample
                if message.over_limit:
                    self._over_limit(message.reason, sent)

    def _answer_server(self, asked: ServerRequest) -> None:
        if asked.method == "ping":
            self._write(jsonrpc.result_response(asked.id, {}))
        else:
            self._write(
                jsonrpc.error_response(
                    asked.id, jsonrpc.METHOD_NOT_FOUND, f"seri does not offer {asked.method}"
                )
            )

    def _drain_stderr(self, stream: IO[bytes]) -> None:
        fd = stream.fileno()
        while True:
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except OSError:
                return
            if not chunk:
                return
            with self._stderr_lock:
                self._stderr += chunk
                del self._stderr[:-STDERR_KEEP_BYTES]

    def _ended(self) -> None:
        """stdout closed: the process is gone or going. Fail everything waiting, for good."""
        proc = self._proc
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=CLOSE_GRACE_SECONDS)
        if self._drainer is not None:
            self._drainer.join(timeout=0.5)
        self._exit_note = self._status_note()
        self._pending.fail_all(Failure(EXITED, self._exit_message()), final=True)
        if self._on_exit is not None:
            self._on_exit(self)

    def _status_note(self) -> str:
        code = None if self._proc is None else self._proc.poll()
        if code is None:
            return "the server closed its output"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the server was killed by {name}"
        return f"the server exited with status {code}"

    def _exit_message(self) -> str:
        return self.diagnostics() or "the server is not running"


def _daemon(target: Any, stream: IO[bytes], name: str) -> threading.Thread:
    thread = threading.Thread(target=target, args=(stream,), name=name, daemon=True)
    thread.start()
    return thread


def _waited(proc: subprocess.Popen[bytes], seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return False
    return True


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(proc.pid, sig)
