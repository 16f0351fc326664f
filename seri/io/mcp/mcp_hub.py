"""All of a session's MCP servers: started in the background, their tools named, calls routed.

``start`` returns at once; each server connects on a thread of its own (spawn or reach it,
settle the era, list its tools), so the servers come up while the person types. A chat asks
``wait_ready(bound)`` before its first model call and goes on with whatever is ready by then;
a slow server keeps starting and its tools appear once it is up (an ``McpEvent`` says so).

``tools()`` is what goes into requests: every tool of every running server, named
``mcp__<server>__<tool>``. ``call(name, arguments)`` routes a call to its server and always
returns an ``McpCallOutcome``: a result, a tool error, or words saying why there is none.

A server that stops (its process exits, its URL stops answering) is started again once, in the
background; a call that was running when it stopped is reported, never repeated (it may have
had effects). If it stops a second time its tools are gone for the session, with an event
saying so. A server that says its tool list changed has it read again.

What a server is opened with (its transport, environment, handshake) is
``seri.io.mcp.mcp_server_opening``'s; what the hub holds and tells of each server (its slot, its
status, events) is ``seri.io.mcp.mcp_server_status``'s.

Secrets: each stdio server starts with ``seri.pure.mcp.mcp_environment``'s environment (seri's
own, credentials held back, plus its entry's ``env``). Messages the hub writes (statuses,
events, failed calls) are passed through redaction, since they may quote a server's stderr.
Tool *results* are returned as the server sent them, for the caller to cap, redact and record
like any other tool result.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from seri import __version__
from seri.io.mcp.mcp_server_opening import Opened, ServerOpener
from seri.io.mcp.mcp_server_status import (
    CLOSED,
    FAILED,
    READY,
    RESTARTING,
    McpEvent,
    McpServerStatus,
    McpToolEntry,
    ServerSlot,
    status_of,
    tool_entries,
)
from seri.io.mcp.mcp_session import PROBE_TIMEOUT_SECONDS
from seri.io.mcp.mcp_transport import DEFAULT_MAX_MESSAGE_BYTES, EXITED, Failure, Transport
from seri.pure.mcp import mcp_results
from seri.pure.mcp.jsonrpc import Notification
from seri.pure.mcp.mcp_config import HTTP, McpServerConfig
from seri.pure.mcp.mcp_protocol import LEGACY
from seri.pure.mcp.mcp_results import McpCallOutcome
from seri.pure.trajectories.redaction import Redactor, secrets_from_environment

DEFAULT_STARTUP_SECONDS = 30.0
DEFAULT_CALL_SECONDS = 120.0
MAX_RESTARTS = 1


class McpHub:
    """The MCP servers of one session. Safe to use from several threads."""

    def __init__(
        self,
        configs: Sequence[McpServerConfig],
        *,
        parent_env: Mapping[str, str],
        project_dir: Path,
        known_secrets: Iterable[str] = (),
        client_version: str = __version__,
        startup_timeout: float = DEFAULT_STARTUP_SECONDS,
        call_timeout: float = DEFAULT_CALL_SECONDS,
        probe_timeout: float = PROBE_TIMEOUT_SECONDS,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._servers = [ServerSlot(config) for config in configs]
        secrets = tuple(known_secrets)
        self._redactor = Redactor.of((*secrets, *secrets_from_environment(parent_env)))
        self._opener = ServerOpener(
            parent_env=parent_env,
            project_dir=project_dir,
            secrets=secrets,
            client_version=client_version,
            probe_timeout=probe_timeout,
            max_message_bytes=max_message_bytes,
        )
        self._startup_timeout = startup_timeout
        self._call_timeout = call_timeout
        self._events: deque[McpEvent] = deque()
        self._events_lock = threading.Lock()
        self._closing = False
        self._started = False
        self._waited = False

    # --- life ---------------------------------------------------------------------------------

    def start(self) -> None:
        """Begin connecting every server, each on its own thread; returns at once."""
        if self._started:
            return
        self._started = True
        for server in self._servers:
            server.started_at = time.monotonic()
            self._spawn(self._connect, server)

    def wait_ready(self, timeout: float) -> tuple[McpServerStatus, ...]:
        """Wait until every server is up or has failed, or ``timeout`` seconds; the statuses.

        Servers still starting after that keep starting; a ``ready`` event announces each.
        """
        self.start()
        deadline = time.monotonic() + timeout
        for server in self._servers:
            server.settled.wait(max(deadline - time.monotonic(), 0))
        self._waited = True
        return self.statuses()

    def close(self) -> None:
        """Stop every server (stdin closed, then SIGTERM, then SIGKILL; HTTP sessions ended)."""
        self._closing = True
        connections = []
        for server in self._servers:
            with server.lock:
                if server.connection is not None:
                    connections.append(server.connection)
                connections.extend(server.opening)
                server.opening = []
                server.connection = None
                server.state = CLOSED
                server.tools = ()
                server.settled.set()
        threads = [self._spawn(connection.close) for connection in connections]
        for thread in threads:
            thread.join()

    def __enter__(self) -> McpHub:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- what there is ------------------------------------------------------------------------

    def statuses(self) -> tuple[McpServerStatus, ...]:
        return tuple(status_of(server) for server in self._servers)

    def tools(self) -> tuple[McpToolEntry, ...]:
        """Every tool of every running server, with its exposed name, in configuration order."""
        return tool_entries(self._servers)

    def events(self) -> tuple[McpEvent, ...]:
        """What happened since the last call (each event is returned once)."""
        with self._events_lock:
            drained = tuple(self._events)
            self._events.clear()
        return drained

    # --- calls --------------------------------------------------------------------------------

    def call(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        cap_chars: int | None = None,
    ) -> McpCallOutcome:
        """Run the tool the model calls ``name``; every ending is an outcome, none raises."""
        entry = next((e for e in tool_entries(self._servers) if e.name == name), None)
        if entry is None:
            return mcp_results.failed(
                mcp_results.UNAVAILABLE,
                f"there is no MCP tool {name!r} now (its server may have stopped); "
                "use another tool",
            )
        server = next(s for s in self._servers if s.config.name == entry.server)
        limit = timeout or server.config.call_timeout or self._call_timeout
        if server.state == RESTARTING:
            server.settled.wait(min(limit, self._startup_timeout))
        with server.lock:
            connection, generation = server.connection, server.generation
            tool = next((t for t in server.tools if t.name == entry.tool.name), None)
            state, message = server.state, server.message
        if connection is None or tool is None or state != READY:
            why = f": {message}" if message else ""
            return self._safe(
                mcp_results.failed(
                    mcp_results.UNAVAILABLE,
                    f"MCP server {entry.server!r} is not running ({state}{why}); use another tool",
                )
            )
        outcome = connection.call_tool(
            tool, arguments, timeout=limit, cancel=cancel, cap_chars=cap_chars
        )
        if outcome.kind in (mcp_results.SERVER_EXITED, mcp_results.UNAVAILABLE):
            note = self._lost(server, generation, outcome.text)
            outcome = attrs.evolve(outcome, text=f"{outcome.text}. {note}")
        if outcome.kind not in (mcp_results.OK, mcp_results.TOOL_ERROR):
            outcome = self._safe(outcome)
        return outcome

    # --- connecting ---------------------------------------------------------------------------

    def _connect(self, server: ServerSlot) -> None:
        """Bring ``server`` up (first start or restart) and settle it either way."""
        config = server.config
        deadline = time.monotonic() + self._startup_timeout
        outcome = self._open(server, config.era, deadline)
        if (
            isinstance(outcome, Failure)
            and outcome.kind == EXITED
            and config.era == "auto"
            and config.transport != HTTP
            and time.monotonic() < deadline
        ):
            # Some handshake-era servers die on any request before initialize (the probe).
            outcome = self._open(server, LEGACY, deadline)
        if isinstance(outcome, Failure):
            self._settle_failed(server, outcome.message)
            return
        connection, info, listed = outcome
        late = self._waited and server.restarts == 0
        with server.lock:
            if self._closing:
                connection.close()
                return
            server.connection, server.info = connection, info
            server.tools, server.skipped = listed.tools, listed.skipped
            server.state, server.message = READY, ""
            server.generation += 1
            if server.startup_seconds is None:
                server.startup_seconds = time.monotonic() - server.started_at
            count = len(listed.tools)
            if server.restarts:
                self._event(
                    server, "restarted", f"MCP server {config.name!r} is running again", count
                )
            elif late:
                self._event(
                    server,
                    "ready",
                    f"MCP server {config.name!r} is ready now, with {count} tool(s)",
                    count,
                )
            server.settled.set()

    def _open(self, server: ServerSlot, era: str, deadline: float) -> Opened | Failure:
        return self._opener.open(
            server,
            era,
            deadline,
            closing=lambda: self._closing,
            on_notification=lambda message: self._notified(server, message),
            on_exit=lambda transport: self._exited(server, transport),
        )

    def _settle_failed(self, server: ServerSlot, message: str) -> None:
        safe = self._redactor.text(message)
        with server.lock:
            if self._closing:
                return
            server.state, server.message, server.tools = FAILED, safe, ()
            server.connection = None
            # A failure before wait_ready() returned is in the statuses it returns; an event is
            # for what happens later (a slow server that gives up, a restart that fails).
            if self._waited or server.restarts:
                verb = "could not be started again" if server.restarts else "could not be started"
                self._event(server, "failed", f"MCP server {server.config.name!r} {verb}: {safe}")
            server.settled.set()

    # --- losing a server ----------------------------------------------------------------------

    def _exited(self, server: ServerSlot, transport: Transport) -> None:
        """The process behind ``transport`` ended (called from its reader thread). Only the
        server's current connection counts: an old one's late news changes nothing."""
        with server.lock:
            connection, generation = server.connection, server.generation
        if connection is not None and connection.transport is transport:
            self._lost(server, generation, transport.diagnostics())

    def _lost(self, server: ServerSlot, generation: int, reason: str) -> str:
        """``server`` stopped while at ``generation``: restart it once, or let it go. Whoever
        notices first (the reader thread, a failed call) acts; the rest only read the state.
        The event is queued under the server's lock, so whoever sees the new state sees it.
        Returns a sentence for the call that noticed."""
        name = server.config.name
        reason = self._redactor.text(reason)
        old, restart = None, False
        with server.lock:
            if not self._closing and server.generation == generation and server.state == READY:
                old, server.connection = server.connection, None
                if server.restarts >= MAX_RESTARTS:
                    server.state, server.tools = FAILED, ()
                    server.message = "it stopped again after its restart"
                    server.settled.set()
                    self._event(
                        server,
                        "gone",
                        f"MCP server {name!r} stopped again ({reason}); "
                        "its tools are gone for this session",
                    )
                else:
                    server.restarts += 1
                    server.state, restart = RESTARTING, True
                    server.settled.clear()
                    self._event(
                        server,
                        "restarting",
                        f"MCP server {name!r} stopped ({reason}); restarting it once",
                        len(server.tools),
                    )
            state = server.state
        if old is not None:
            self._spawn(old.close)
        if restart:
            self._spawn(self._connect, server)
        if state in (RESTARTING, READY):
            return (
                f"seri is starting MCP server {name!r} again; the call was not repeated, so "
                "check whether it took effect before trying again"
            )
        return f"MCP server {name!r} had already been restarted once, so its tools are gone"

    # --- tool list changes --------------------------------------------------------------------

    def _notified(self, server: ServerSlot, message: Notification) -> None:
        if message.method != "notifications/tools/list_changed":
            return
        with server.lock:
            if server.state != READY:
                return
            server.stale = True
            if server.refreshing:
                return
            server.refreshing = True
        self._spawn(self._refresh, server)

    def _refresh(self, server: ServerSlot) -> None:
        while True:
            with server.lock:
                connection = server.connection
                if not server.stale or connection is None or self._closing:
                    server.refreshing = False
                    return
                server.stale = False
                before = tuple(tool.name for tool in server.tools)
            listed = connection.list_tools(self._startup_timeout)
            if isinstance(listed, Failure):
                continue
            with server.lock:
                if server.connection is connection:
                    server.tools, server.skipped = listed.tools, listed.skipped
            after = tuple(tool.name for tool in listed.tools)
            if after != before:
                self._event(
                    server,
                    "tools_changed",
                    f"MCP server {server.config.name!r} now offers {len(after)} tool(s)",
                    len(after),
                )

    # --- helpers ------------------------------------------------------------------------------

    def _event(self, server: ServerSlot, kind: str, message: str, tools: int = 0) -> None:
        with self._events_lock:
            safe = self._redactor.text(message)
            self._events.append(McpEvent(server.config.name, kind, safe, tools))

    def _safe(self, outcome: McpCallOutcome) -> McpCallOutcome:
        return attrs.evolve(outcome, text=self._redactor.text(outcome.text))

    @staticmethod
    def _spawn(target: Any, *args: Any) -> threading.Thread:
        thread = threading.Thread(target=target, args=args, name="mcp-hub", daemon=True)
        thread.start()
        return thread
