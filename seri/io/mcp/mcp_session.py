"""One MCP server, connected: the era settled, its tools listed, its tools called.

``open`` settles the era (``seri.pure.mcp.mcp_protocol`` has the rules): with ``era="auto"`` it
probes ``server/discover`` and falls back to the ``initialize`` handshake, ``"legacy"`` goes
straight to the handshake and ``"modern"`` straight to per-request metadata. ``list_tools``
follows ``nextCursor`` to the end. ``call_tool`` turns every way a call can end into a
``McpCallOutcome``. Over HTTP, a handshake session the server forgot (404) is opened again
once and the request repeated (the server never saw it, so nothing runs twice).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

import attrs

from seri.io.mcp.mcp_transport import (
    CANCELLED,
    EXITED,
    HTTP_STATUS,
    REFUSED,
    SESSION_EXPIRED,
    TIMEOUT,
    UNREACHABLE,
    UNREADABLE,
    Answer,
    Failure,
    McpRequest,
    Transport,
)
from seri.pure.mcp import mcp_results
from seri.pure.mcp.jsonrpc import ErrorResponse, Response
from seri.pure.mcp.mcp_protocol import (
    LATEST_MODERN,
    LEGACY,
    MODERN,
    FallBack,
    Incompatible,
    Retry,
    ServerInfo,
    initialize_params,
    modern_headers,
    modern_params,
    read_discover,
    read_initialize,
    read_initialize_error,
)
from seri.pure.mcp.mcp_results import McpCallOutcome
from seri.pure.mcp.mcp_tools import MAX_PAGES, McpTool, header_values, read_tools_page

# How long the server/discover probe may go unanswered before the server counts as a
# handshake server (some of those ignore any request that comes before initialize).
PROBE_TIMEOUT_SECONDS = 5.0


@attrs.frozen
class ToolList:
    tools: tuple[McpTool, ...]
    skipped: tuple[str, ...] = ()


class McpConnection:
    """A server behind a transport. Thread-safe once ``open`` has returned."""

    def __init__(
        self,
        transport: Transport,
        *,
        server: str,
        client_version: str,
        era: str = "auto",
        over_http: bool = False,
        probe_timeout: float = PROBE_TIMEOUT_SECONDS,
    ) -> None:
        self.transport = transport
        self.server = server
        self._client_version = client_version
        self._era = era
        self._over_http = over_http
        self._probe_timeout = probe_timeout
        self._reopen_lock = threading.Lock()
        self.info: ServerInfo | None = None

    # --- opening ------------------------------------------------------------------------------

    def open(self, deadline: float) -> ServerInfo | Failure:
        """Settle the era and say hello; ``Failure`` when the server cannot be used."""
        started = self.transport.start()
        if started is not None:
            return started
        if self._era == LEGACY:
            outcome = _settled(self._handshake(deadline, retried=True))
        elif self._era == MODERN:
            outcome = self._modern_only(deadline)
        else:
            outcome = self._negotiate(deadline)
        if isinstance(outcome, ServerInfo):
            self.info = outcome
        return outcome

    def _modern_only(self, deadline: float) -> ServerInfo | Failure:
        verdict = self._probe(deadline, LATEST_MODERN, patient=True)
        if isinstance(verdict, Retry):
            verdict = self._probe(deadline, verdict.version, patient=True)
        if isinstance(verdict, ServerInfo | Failure):
            return verdict
        reason = verdict.reason if isinstance(verdict, FallBack) else "it wants another version"
        return Failure(
            REFUSED,
            f"the server does not speak the stateless protocol ({reason}); remove "
            '"protocol": "modern" from its entry',
        )

    def _negotiate(self, deadline: float) -> ServerInfo | Failure:
        version = LATEST_MODERN
        retried = False
        while True:
            verdict = self._probe(deadline, version, patient=False)
            if isinstance(verdict, ServerInfo | Failure):
                return verdict
            if isinstance(verdict, Retry) and not retried:
                version, retried = verdict.version, True
                continue
            outcome = self._handshake(deadline, retried=retried)
            if isinstance(outcome, Retry):
                version, retried = outcome.version, True
                continue
            return outcome

    def _probe(
        self, deadline: float, version: str, *, patient: bool
    ) -> ServerInfo | FallBack | Retry | Failure:
        """One ``server/discover``; not ``patient``: a short wait, and silence means legacy."""
        remaining = deadline - time.monotonic()
        wait = remaining if patient else min(remaining, self._probe_timeout)
        answer = self._send("server/discover", {}, version=version, timeout=max(wait, 0.01))
        if isinstance(answer, Failure):
            if answer.kind == TIMEOUT and not patient and time.monotonic() < deadline:
                return FallBack("no answer to server/discover")
            if self._over_http and answer.kind in (HTTP_STATUS, UNREADABLE):
                # An HTTP error without a modern JSON-RPC body: a handshake-era server.
                return FallBack(answer.message)
            return answer
        verdict = read_discover(answer, version)
        if isinstance(verdict, Incompatible):
            return Failure(REFUSED, verdict.message)
        if isinstance(verdict, ServerInfo):
            self.transport.set_protocol_version("")
        return verdict

    def _handshake(self, deadline: float, *, retried: bool) -> ServerInfo | Retry | Failure:
        remaining = max(deadline - time.monotonic(), 0.01)
        answer = self.transport.request(
            McpRequest("initialize", initialize_params(self._client_version), remaining)
        )
        if isinstance(answer, Failure):
            return answer
        if isinstance(answer, ErrorResponse):
            verdict = read_initialize_error(answer, already_retried=retried)
            return verdict if isinstance(verdict, Retry) else Failure(REFUSED, verdict.message)
        info = read_initialize(answer.result)
        if isinstance(info, Incompatible):
            return Failure(REFUSED, info.message)
        self.transport.set_protocol_version(info.version)
        self.transport.notify("notifications/initialized")
        return info

    # --- requests -----------------------------------------------------------------------------

    def _send(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        version: str,
        timeout: float,
        cancel: threading.Event | None = None,
        tool: McpTool | None = None,
    ) -> Answer:
        if version:
            params = modern_params(params, version, self._client_version)
        headers: tuple[tuple[str, str], ...] = ()
        if version and self._over_http:
            headers = modern_headers(method, params or {}, version)
            if tool is not None:
                headers += header_values(tool.header_parameters, _arguments(params))
        return self.transport.request(McpRequest(method, params, timeout, cancel, headers))

    def request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        *,
        timeout: float,
        cancel: threading.Event | None = None,
        tool: McpTool | None = None,
    ) -> Answer:
        """A request in the settled era; a forgotten HTTP session is reopened once."""
        info = self.info
        version = info.version if info is not None and info.era == MODERN else ""
        deadline = time.monotonic() + timeout
        answer = self._send(
            method, params, version=version, timeout=timeout, cancel=cancel, tool=tool
        )
        if isinstance(answer, Failure) and answer.kind == SESSION_EXPIRED:
            reopened = self._reopen(deadline)
            if isinstance(reopened, Failure):
                return reopened
            answer = self._send(
                method,
                params,
                version=version,
                timeout=max(deadline - time.monotonic(), 0.01),
                cancel=cancel,
                tool=tool,
            )
        return answer

    def _reopen(self, deadline: float) -> ServerInfo | Failure:
        with self._reopen_lock:
            forget = getattr(self.transport, "forget_session", None)
            if forget is not None:
                forget()
            outcome = self._handshake(deadline, retried=True)
            settled = _settled(outcome)
            if isinstance(settled, ServerInfo):
                self.info = settled
            return settled

    def list_tools(self, timeout: float) -> ToolList | Failure:
        """Every page of ``tools/list`` (stopping at a repeated cursor or ``MAX_PAGES``)."""
        deadline = time.monotonic() + timeout
        tools: list[McpTool] = []
        skipped: list[str] = []
        seen_cursors: set[str] = set()
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else {}
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return Failure(TIMEOUT, f"tools/list did not finish within {timeout:g} s")
            answer = self.request("tools/list", params, timeout=remaining)
            if isinstance(answer, Failure):
                return answer
            if isinstance(answer, ErrorResponse):
                return Failure(
                    REFUSED, f"tools/list failed: {answer.message} (JSON-RPC error {answer.code})"
                )
            page = read_tools_page(answer.result, over_http=self._over_http)
            tools.extend(page.tools)
            skipped.extend(page.skipped)
            if page.next_cursor is None or page.next_cursor in seen_cursors:
                break
            seen_cursors.add(page.next_cursor)
            cursor = page.next_cursor
        unique = _unique(tools, skipped)
        return ToolList(unique, tuple(skipped))

    def call_tool(
        self,
        tool: McpTool,
        arguments: Mapping[str, Any],
        *,
        timeout: float,
        cancel: threading.Event | None = None,
        cap_chars: int | None = None,
    ) -> McpCallOutcome:
        """Run ``tool`` once; whatever happens comes back as an outcome."""
        params = {"name": tool.name, "arguments": dict(arguments)}
        answer = self.request("tools/call", params, timeout=timeout, cancel=cancel, tool=tool)
        if isinstance(answer, Response):
            return mcp_results.render_result(answer.result, cap_chars)
        if isinstance(answer, ErrorResponse):
            text = mcp_results.rpc_error_text(self.server, tool.name, answer.code, answer.message)
            return mcp_results.failed(mcp_results.RPC_ERROR, text)
        return failure_outcome(self.server, tool.name, answer, timeout)

    def close(self) -> None:
        self.transport.close()


def failure_outcome(server: str, tool: str, failure: Failure, timeout: float) -> McpCallOutcome:
    """The outcome of a call that got no response."""
    if failure.kind == TIMEOUT:
        return mcp_results.failed(
            mcp_results.TIMEOUT, mcp_results.timeout_text(server, tool, timeout)
        )
    if failure.kind == CANCELLED:
        return mcp_results.failed(
            mcp_results.CANCELLED, f"the call to {tool!r} was cancelled before it finished"
        )
    if failure.kind == EXITED:
        return mcp_results.failed(
            mcp_results.SERVER_EXITED,
            f"MCP server {server!r} stopped while running {tool!r}: {failure.message}",
        )
    if failure.kind == UNREACHABLE:
        return mcp_results.failed(
            mcp_results.UNAVAILABLE,
            f"MCP server {server!r} could not be reached for {tool!r}: {failure.message}",
        )
    return mcp_results.failed(
        mcp_results.PROTOCOL,
        f"MCP server {server!r} gave no usable answer to {tool!r}: {failure.message}",
    )


def _settled(outcome: ServerInfo | Retry | Failure) -> ServerInfo | Failure:
    if isinstance(outcome, Retry):
        return Failure(REFUSED, "the server asked for the stateless protocol during the handshake")
    return outcome


def _arguments(params: Mapping[str, Any] | None) -> Mapping[str, Any]:
    arguments = (params or {}).get("arguments")
    return arguments if isinstance(arguments, Mapping) else {}


def _unique(tools: list[McpTool], skipped: list[str]) -> tuple[McpTool, ...]:
    """Tools by name, first one kept: a server listing a name twice is a server bug."""
    kept: dict[str, McpTool] = {}
    for tool in tools:
        if tool.name in kept:
            skipped.append(f"{tool.name}: listed more than once; the first is kept")
        else:
            kept[tool.name] = tool
    return tuple(kept.values())
