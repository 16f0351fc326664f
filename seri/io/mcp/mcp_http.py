"""An MCP server at a URL, spoken to over streamable HTTP: one POST per message.

Each request is its own POST, sent with ``Accept: application/json, text/event-stream``; the
server answers with one JSON body or an event stream that carries notifications (progress,
log lines) and then the response. Handshake-era servers may give out an ``Mcp-Session-Id`` on
``initialize``, which is sent back on every later request and ended with DELETE on close; a
404 to a request that carried one means the session expired (the session layer opens a new
one). Modern servers get the request-metadata headers the session layer supplies.

Timeouts and cancellation: the POST runs on a worker thread while the caller waits for its
answer, the deadline and its cancel flag. Giving up closes the response stream, which a modern
server takes as cancellation; a handshake-era server is also sent ``notifications/cancelled``
(for those, a dropped connection alone does not cancel).

The server's own requests on an event stream (``ping``, elicitation and the like, handshake
era only) are answered with a POST of their own: ``ping`` with an empty result, anything else
refused. A server that never opens a GET stream is fine: seri does not open one either, since
it needs no messages that are not about a request it made.

A body or stream longer than the message limit, a line of it longer, or a message nested
deeper than seri's limit (``seri.pure.inputs.bounded_input``) is cut off with an error; headers
given in the configuration (tokens) are sent and never written anywhere.

httpx with the rules of seri's other HTTP (``seri.io.provider.http_client``: proxies and CAs from
the environment, a loopback server never through a proxy), except that redirects are followed.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs
import httpx

from seri.io.mcp.mcp_transport import (
    CANCELLED,
    DEFAULT_MAX_MESSAGE_BYTES,
    HTTP_STATUS,
    OVERSIZED,
    SESSION_EXPIRED,
    TIMEOUT,
    UNREACHABLE,
    UNREADABLE,
    Answer,
    Failure,
    McpRequest,
    NotificationSink,
    PendingRequests,
    wait_for,
)
from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import MCP_HTTP, BoundedInputError, message_too_big
from seri.pure.mcp import jsonrpc
from seri.pure.mcp.jsonrpc import ErrorResponse, Notification, Response, ServerRequest
from seri.pure.mcp.mcp_protocol import HANDSHAKE_VERSIONS
from seri.pure.provider.sse import SSEEvent, SSEParser

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
CONNECT_TIMEOUT_SECONDS = 10.0
# Short requests that are not the caller's (notifications, DELETE, answers to the server).
SIDE_REQUEST_TIMEOUT_SECONDS = 5.0
_BODY_SAMPLE = 300


class HttpTransport:
    """One server endpoint. ``request`` may be called from several threads at once."""

    def __init__(
        self,
        url: str,
        headers: tuple[tuple[str, str], ...] = (),
        *,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        on_notification: NotificationSink | None = None,
    ) -> None:
        self._url = url
        self._configured = headers
        self._limits = attrs.evolve(
            MCP_HTTP,
            max_line_bytes=max_message_bytes,
            max_message_bytes=max_message_bytes,
            max_total_bytes=max_message_bytes,
        )
        self._on_notification = on_notification
        self._pending = PendingRequests()
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()
        self._live: dict[int, httpx.Response] = {}
        self._session_id = ""
        self._version = ""
        self._last_problem = ""
        self._closed = False

    def start(self) -> Failure | None:
        from seri.io.provider.http_client import new_client

        # Redirects are followed; httpx drops Authorization when one leaves the origin.
        self._client = new_client(self._url, follow_redirects=True)
        return None

    def alive(self) -> bool:
        return self._client is not None and not self._closed

    def set_protocol_version(self, version: str) -> None:
        """The handshake's version, sent as ``MCP-Protocol-Version`` from now on."""
        self._version = version

    @property
    def session_id(self) -> str:
        """The handshake-era session the server gave out ("" when none)."""
        return self._session_id

    def forget_session(self) -> None:
        """The server no longer knows our session: the next ``initialize`` starts a new one."""
        with self._lock:
            self._session_id = ""

    def diagnostics(self) -> str:
        return self._last_problem

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pending.fail_all(Failure(CANCELLED, "the connection was closed"), final=True)
        with self._lock:
            live = list(self._live.values())
        for response in live:
            with contextlib.suppress(Exception):
                response.close()
        client = self._client
        if client is None:
            return
        if self._session_id:
            with contextlib.suppress(httpx.HTTPError):
                client.delete(
                    self._url,
                    headers=self._headers(()),
                    timeout=SIDE_REQUEST_TIMEOUT_SECONDS,
                )
        client.close()

    # --- requests -----------------------------------------------------------------------------

    def request(self, call: McpRequest) -> Answer:
        opened = self._pending.open()
        if isinstance(opened, Failure):
            return opened
        request_id, slot = opened
        deadline = time.monotonic() + call.timeout
        body = jsonrpc.request(request_id, call.method, call.params)
        worker = threading.Thread(
            target=self._exchange,
            args=(body, request_id, call.headers, deadline),
            name="mcp-http",
            daemon=True,
        )
        worker.start()
        answer = wait_for(slot, deadline, call.cancel)
        if not isinstance(answer, str):
            return answer
        self._pending.drop(request_id)
        self._abandon(request_id, reason="timed out" if answer == TIMEOUT else "cancelled")
        if answer == TIMEOUT:
            return Failure(TIMEOUT, f"no answer to {call.method} within {call.timeout:g} s")
        return Failure(CANCELLED, f"{call.method} was cancelled")

    def notify(self, method: str, params: Mapping[str, Any] | None = None) -> None:
        self._side_post(jsonrpc.notification(method, params))

    def _abandon(self, request_id: int, reason: str) -> None:
        with self._lock:
            response = self._live.pop(request_id, None)
        if response is not None:
            with contextlib.suppress(Exception):
                response.close()
        if self._version in HANDSHAKE_VERSIONS:
            params = {"requestId": request_id, "reason": reason}
            threading.Thread(
                target=self.notify,
                args=("notifications/cancelled", params),
                daemon=True,
            ).start()

    def _exchange(
        self,
        body: Mapping[str, Any],
        request_id: int,
        extra: tuple[tuple[str, str], ...],
        deadline: float,
    ) -> None:
        answer = self._post(body, request_id, extra, deadline)
        if isinstance(answer, Failure):
            self._last_problem = answer.message
        self._pending.answer(request_id, answer)

    def _post(
        self,
        body: Mapping[str, Any],
        request_id: int,
        extra: tuple[tuple[str, str], ...],
        deadline: float,
    ) -> Answer:
        client = self._client
        if client is None or self._closed:
            return Failure(CANCELLED, "the connection was closed")
        remaining = max(deadline - time.monotonic(), 0.01)
        timeout = httpx.Timeout(
            connect=min(CONNECT_TIMEOUT_SECONDS, remaining),
            read=remaining + 1.0,
            write=min(CONNECT_TIMEOUT_SECONDS, remaining),
            pool=min(CONNECT_TIMEOUT_SECONDS, remaining),
        )
        sent_session = self._session_id
        try:
            with client.stream(
                "POST",
                self._url,
                content=jsonrpc.encode(body),
                headers=self._headers(extra),
                timeout=timeout,
            ) as response:
                with self._lock:
                    self._live[request_id] = response
                try:
                    return self._read(response, request_id, sent_session)
                finally:
                    with self._lock:
                        self._live.pop(request_id, None)
        except httpx.TimeoutException:
            return Failure(TIMEOUT, f"{self._url} did not answer in time")
        except httpx.HTTPError as exc:
            if not self.alive():
                return Failure(CANCELLED, "the connection was closed")
            return Failure(UNREACHABLE, f"cannot reach {self._url}: {_describe(exc)}")
        except (RuntimeError, ValueError, OSError) as exc:
            # The caller closed the stream from its thread (a timeout or a cancel).
            return Failure(CANCELLED, f"the request was abandoned ({type(exc).__name__})")

    def _headers(self, extra: tuple[tuple[str, str], ...]) -> httpx.Headers:
        headers = httpx.Headers(
            {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        )
        for name, value in self._configured:
            headers[name] = value
        if self._session_id:
            headers[SESSION_HEADER] = self._session_id
        if self._version:
            headers[VERSION_HEADER] = self._version
        for name, value in extra:
            headers[name] = value
        return headers

    def _read(self, response: httpx.Response, request_id: int, sent_session: str) -> Answer:
        session = response.headers.get(SESSION_HEADER)
        if session and not self._session_id:
            with self._lock:
                self._session_id = session
        if response.status_code == 404 and sent_session:
            return Failure(SESSION_EXPIRED, "the server no longer knows this session (HTTP 404)")
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if response.status_code < 400 and kind == "text/event-stream":
            return self._read_stream(response, request_id)
        body = self._read_body(response)
        if isinstance(body, Failure):
            return body
        found = self._take_messages(body, request_id)
        if sent_session and _session_refused(response.status_code, found):
            return Failure(SESSION_EXPIRED, "the server no longer knows this session (HTTP 400)")
        if found is not None:
            if isinstance(found, ErrorResponse) and found.id is None:
                return ErrorResponse(request_id, found.code, found.message, found.data)
            return found
        if response.status_code >= 400:
            return Failure(HTTP_STATUS, _status_message(response, body))
        if response.status_code == 202:
            return Failure(UNREADABLE, "the server accepted the request but sent no response")
        return Failure(UNREADABLE, f"the response holds no answer: {body[:_BODY_SAMPLE]!r}")

    def _read_body(self, response: httpx.Response) -> str | Failure:
        data = bytearray()
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) > self._limits.max_message_bytes:
                return self._oversized()
        return data.decode("utf-8", "replace")

    def _read_stream(self, response: httpx.Response, request_id: int) -> Answer:
        parser = SSEParser(self._limits)
        try:
            for chunk in response.iter_bytes():
                for event in parser.feed(chunk):
                    found = self._stream_event(event, request_id)
                    if found is not None:
                        return found
        except BoundedInputError as exc:
            return self._over_limit(exc.reason)
        for event in parser.finish():
            found = self._stream_event(event, request_id)
            if found is not None:
                return found
        return Failure(UNREADABLE, "the server ended its event stream without answering")

    def _stream_event(self, event: object, request_id: int) -> Answer | None:
        # Servers open a stream with an event of empty data (a resume point); skip those.
        if not isinstance(event, SSEEvent) or not event.data.strip():
            return None
        return self._take_messages(event.data, request_id)

    def _take_messages(
        self, text: str, request_id: int
    ) -> Response | ErrorResponse | Failure | None:
        """The answer to ``request_id`` among the messages in ``text``; the rest handled. A
        message over seri's bounds (too deep) fails the request: its answer may be in it."""
        try:
            value = json_text.loads_bounded(text, self._limits)
        except BoundedInputError as exc:
            return self._over_limit(exc.reason)
        except ValueError:
            return None
        answer: Response | ErrorResponse | None = None
        for message in jsonrpc.decode_value(value, text):
            if isinstance(message, Response | ErrorResponse):
                if message.id in (request_id, None):
                    answer = message
            elif isinstance(message, Notification):
                if self._on_notification is not None:
                    self._on_notification(message)
            elif isinstance(message, ServerRequest):
                self._answer_server(message)
        return answer

    def _answer_server(self, asked: ServerRequest) -> None:
        if asked.method == "ping":
            reply = jsonrpc.result_response(asked.id, {})
        else:
            reply = jsonrpc.error_response(
                asked.id, jsonrpc.METHOD_NOT_FOUND, f"seri does not offer {asked.method}"
            )
        threading.Thread(target=self._side_post, args=(reply,), daemon=True).start()

    def _side_post(self, message: Mapping[str, Any]) -> None:
        client = self._client
        if client is None or self._closed:
            return
        with contextlib.suppress(httpx.HTTPError):
            client.post(
                self._url,
                content=jsonrpc.encode(message),
                headers=self._headers(()),
                timeout=SIDE_REQUEST_TIMEOUT_SECONDS,
            )

    def _oversized(self) -> Failure:
        return self._over_limit(message_too_big(self._limits).reason)

    def _over_limit(self, what: str) -> Failure:
        return Failure(OVERSIZED, f"the server sent {what}, which was dropped")


def _session_refused(status: int, found: Response | ErrorResponse | Failure | None) -> bool:
    """A 400 that says the session is unknown: what the TypeScript SDK's example servers send
    (server-everything 2026.8.31: -32000 "Bad Request: No valid session ID provided") where
    the spec says 404."""
    return status == 400 and isinstance(found, ErrorResponse) and "session" in found.message.lower()


def _status_message(response: httpx.Response, body: str) -> str:
    status = response.status_code
    if status == 401:
        return (
            "the server wants authorization (HTTP 401); seri does not do MCP OAuth, so give a "
            'token in the entry\'s "headers" (e.g. "Authorization": "Bearer ${MY_TOKEN}")'
        )
    if status == 403:
        return "the server refused access (HTTP 403); check the entry's headers"
    sample = " ".join(body.split())[:_BODY_SAMPLE]
    return f"HTTP {status} {response.reason_phrase}" + (f": {sample}" if sample else "")


def _describe(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    return text[:_BODY_SAMPLE]
