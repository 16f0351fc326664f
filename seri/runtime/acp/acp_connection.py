"""The stdio side of ``seri acp``: JSON-RPC lines in on stdin, out on stdout, nothing else.

A reader thread reads the client's lines as they come, even while a task runs on the main
thread, through the bounded line splitter (``ACP_STDIO``: a line longer than its limit is
answered with a JSON-RPC error as soon as the limit is passed, and its bytes are dropped up
to its end, never held). It answers a malformed line with a JSON-RPC error at once, hands
the client's replies to seri's own requests (a permission question, a file read) to
whoever waits for them, passes ``session/cancel`` straight on (the main thread is busy with
the very turn it cancels), and queues every other request for the main thread in order.
When stdin ends (the client is gone) the running task is cancelled, every wait is answered
with None, and the main loop stops.

stdout is the protocol's: each line is written whole under a lock, and a client that has
gone away makes writes no-ops, never an exception in the middle of a turn.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from seri.pure.acp import acp_wire
from seri.pure.acp.acp_wire import ClientMessage, Malformed, Reply
from seri.pure.inputs.bounded_input import ACP_STDIO, LineSplitter, OverlongLine

# What one read of stdin asks for: a line longer than this arrives in pieces.
_READ_CHUNK = 65_536

# Told of a session/cancel notification (its params), from the reader thread.
OnCancel = Callable[[dict[str, Any]], None]
# Answers a request at once, off the main thread (True), or leaves it for the queue (False).
ServeNow = Callable[[ClientMessage], bool]


class Connection:
    def __init__(self, incoming: IO[bytes], outgoing: IO[bytes]) -> None:
        self._in = incoming
        self._out = outgoing
        self._on_cancel: OnCancel = lambda params: None
        self._on_gone: Callable[[], None] = lambda: None
        self._serve_now: ServeNow = lambda call: False
        self._write_lock = threading.Lock()
        self._inbox: queue.Queue[ClientMessage | None] = queue.Queue()
        self._waiting: dict[int, tuple[threading.Event, list[Reply | None]]] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        # Writes failed (stdout closed), and stdin ended (no reply can come any more).
        self.gone = False
        self.input_closed = False
        self._reader = threading.Thread(target=self._read, name="acp-reader", daemon=True)

    def start(
        self,
        on_cancel: OnCancel,
        on_gone: Callable[[], None],
        serve_now: ServeNow = lambda call: False,
    ) -> None:
        """Read the client's lines from now on; ``on_cancel`` and ``on_gone`` are called from
        the reader thread (a session/cancel, the end of stdin), and so is ``serve_now``, which
        takes a request it answers itself while the main thread is busy (True), or leaves it
        to be queued (False)."""
        self._on_cancel, self._on_gone, self._serve_now = on_cancel, on_gone, serve_now
        self._reader.start()

    # -- writing -------------------------------------------------------------------------------

    def send(self, line: str) -> None:
        with self._write_lock:
            if self.gone:
                return
            try:
                self._out.write(line.encode("ascii") + b"\n")
                self._out.flush()
            except (BrokenPipeError, OSError, ValueError):
                self.gone = True

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.send(acp_wire.notification(method, params))

    def ask(
        self, method: str, params: dict[str, Any], timeout: float | None = None
    ) -> Reply | None:
        """Send a request to the client and wait for its reply (None: the client is gone,
        or ``timeout`` seconds passed). The wait is interruptible: a cancel (SIGINT) ends it
        as it ends the turn."""
        event = threading.Event()
        slot: list[Reply | None] = [None]
        with self._lock:
            self._next_id += 1
            id_ = self._next_id
            self._waiting[id_] = (event, slot)
        if self.input_closed:
            return None
        self.send(acp_wire.request(id_, method, params))
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while not event.wait(0.2 if timeout is None else min(0.2, timeout)):
                if self.input_closed or self.gone:
                    return None
                if deadline is not None and time.monotonic() >= deadline:
                    return None
        finally:
            with self._lock:
                self._waiting.pop(id_, None)
        return slot[0]

    # -- reading -------------------------------------------------------------------------------

    def next_call(self) -> ClientMessage | None:
        """The next request or notification for the main thread; None when the client left."""
        return self._inbox.get()

    def _read(self) -> None:
        lines = LineSplitter(ACP_STDIO.max_line_bytes)
        fd = self._in.fileno()
        try:
            while chunk := os.read(fd, _READ_CHUNK):
                for line in lines.feed(chunk):
                    self._take_line(line)
            rest = lines.finish()  # a last line without its newline
            if rest is not None:
                self._take_line(rest)
        except (OSError, ValueError) as e:
            print(f"seri acp: reading stdin failed: {e}", file=sys.stderr)
        self._leave()

    def _take_line(self, raw: bytes | OverlongLine) -> None:
        if isinstance(raw, OverlongLine):
            self._take(acp_wire.overlong_line())
            return
        line = raw.decode("utf-8", errors="replace").strip()
        if line:
            self._take(acp_wire.parse_line(line))

    def _take(self, message: ClientMessage | Reply | Malformed) -> None:
        if isinstance(message, Malformed):
            self.send(acp_wire.error(message.id, message.code, message.message))
        elif isinstance(message, Reply):
            with self._lock:
                waiting = self._waiting.get(message.id) if isinstance(message.id, int) else None
            if waiting is None:
                print(f"seri acp: a reply to no request of seri's: {message.id}", file=sys.stderr)
                return
            event, slot = waiting
            slot[0] = message
            event.set()
        elif message.method == "session/cancel" and message.id is None:
            self._on_cancel(message.params)
        elif not self._serve_now(message):
            self._inbox.put(message)

    def _leave(self) -> None:
        with self._lock:
            self.input_closed = True
            for event, _slot in self._waiting.values():
                event.set()
        self._on_gone()
        self._inbox.put(None)
