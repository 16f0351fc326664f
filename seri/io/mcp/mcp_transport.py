"""What the two MCP transports (stdio, streamable HTTP) have in common.

A transport carries one JSON-RPC request to a server and brings back its response, or a
``Failure`` saying why none came: the time ran out, the caller cancelled, the server exited,
could not be reached, or sent something too big or unreadable. Nothing is raised for any of
these; a tool call that fails is an ordinary outcome the model reads.

``PendingRequests`` pairs responses with the requests waiting for them by id: a stdio server
answers on one pipe in whatever order it likes, so a reader thread hands each response to the
request that is waiting for it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import attrs

from seri.pure.mcp.jsonrpc import ErrorResponse, Notification, RequestId, Response

TIMEOUT = "timeout"
CANCELLED = "cancelled"
EXITED = "exited"
UNREACHABLE = "unreachable"
HTTP_STATUS = "http_status"
SESSION_EXPIRED = "session_expired"
OVERSIZED = "oversized"
UNREADABLE = "unreadable"
# The server answered but will not work with seri (no common protocol version, an error).
REFUSED = "refused"

# How often a waiting request looks at its cancel flag.
CANCEL_POLL_SECONDS = 0.05
# The largest single message seri takes from a server (a huge tool result still fits).
DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@attrs.frozen
class McpRequest:
    """One request to send: its method and params, how long to wait for the answer, the
    caller's cancel flag, and extra HTTP headers (stateless era; stdio ignores them)."""

    method: str
    params: Mapping[str, Any] | None
    timeout: float
    cancel: threading.Event | None = None
    headers: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class Failure:
    """No response came. ``kind`` is one of the constants above; ``message`` is for people."""

    kind: str
    message: str


Answer = Response | ErrorResponse | Failure
NotificationSink = Callable[[Notification], None]


class Transport(Protocol):
    """The operations the MCP session needs from a transport."""

    def start(self) -> Failure | None: ...

    def request(self, call: McpRequest) -> Answer: ...

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None: ...

    def set_protocol_version(self, version: str) -> None: ...

    def alive(self) -> bool: ...

    def diagnostics(self) -> str: ...

    def close(self) -> None: ...


@attrs.define
class _Slot:
    event: threading.Event = attrs.field(factory=threading.Event)
    answer: Answer | None = None


class PendingRequests:
    """Requests sent and not yet answered, each with a slot its answer is put in."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[RequestId, _Slot] = {}
        self._next_id = 0
        self._closed: Failure | None = None

    def open(self) -> tuple[int, _Slot] | Failure:
        """A fresh request id and its slot, or the failure that ended the connection."""
        with self._lock:
            if self._closed is not None:
                return self._closed
            self._next_id += 1
            slot = _Slot()
            self._slots[self._next_id] = slot
            return self._next_id, slot

    def answer(self, request_id: RequestId, answer: Answer) -> bool:
        """Deliver an answer; ``False`` when nobody waits for that id (late or unknown)."""
        with self._lock:
            slot = self._slots.pop(request_id, None)
        if slot is None:
            return False
        slot.answer = answer
        slot.event.set()
        return True

    def drop(self, request_id: RequestId) -> None:
        with self._lock:
            self._slots.pop(request_id, None)

    def last_id(self) -> int:
        """The id of the latest request opened (0 before the first)."""
        with self._lock:
            return self._next_id

    def fail_all(self, failure: Failure, *, final: bool, up_to: int | None = None) -> None:
        """Answer every waiting request with ``failure``, or only those opened up to id
        ``up_to``; ``final`` refuses new ones too."""
        with self._lock:
            failed = [
                request_id
                for request_id in self._slots
                if up_to is None or (isinstance(request_id, int) and request_id <= up_to)
            ]
            slots = [self._slots.pop(request_id) for request_id in failed]
            if final:
                self._closed = failure
        for slot in slots:
            slot.answer = failure
            slot.event.set()

    def count(self) -> int:
        with self._lock:
            return len(self._slots)


def wait_for(slot: _Slot, deadline: float, cancel: threading.Event | None) -> Answer | str:
    """The slot's answer, or ``TIMEOUT`` / ``CANCELLED`` if that came first."""
    while True:
        if cancel is not None and cancel.is_set():
            return CANCELLED
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return TIMEOUT
        step = remaining if cancel is None else min(remaining, CANCEL_POLL_SECONDS)
        if slot.event.wait(step) and slot.answer is not None:
            return slot.answer


def tail_text(data: bytes | bytearray, limit: int) -> str:
    """The last ``limit`` bytes of a server's stderr, as text, for an error message."""
    return bytes(data[-limit:]).decode("utf-8", "replace").strip()
