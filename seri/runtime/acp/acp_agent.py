"""``seri acp``: the Agent Client Protocol's methods, served over one stdio connection.

Each session the client opens is a ``SessionController`` (the one ``seri chat`` drives) with
an ``AcpFront`` for its front-end: the same store, leases, permissions, sandbox,
compaction and recording. Tasks run on the main thread, one at a time, so that
``session/cancel`` ends one exactly as Ctrl-C does (``SessionController.cancel``).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from seri import __version__
from seri.pure.acp import acp_wire
from seri.pure.acp.acp_wire import AcpError, ClientMessage
from seri.pure.inputs.errors import SeriError
from seri.pure.mcp import jsonrpc
from seri.runtime.acp.acp_commands import available_commands, slash_command
from seri.runtime.acp.acp_connection import Connection

# Only what initialize needs is imported up front (it is answered within 150 ms of spawn):
# the session's parts load with the first session.
if TYPE_CHECKING:
    from seri.pure.inputs.settings import Settings
    from seri.runtime.acp.acp_front import AcpFront, FileText
    from seri.runtime.acp.acp_session import AcpSession
    from seri.runtime.session.profile import Profile

# What is answered while a task runs (the rest waits for it): reads of seri.db only.
SERVED_DURING_A_TASK = frozenset({"session/list"})
KEY_VARIABLE = "OPENROUTER_API_KEY"


def _absolute_dir(params: dict[str, Any]) -> str:
    cwd = params.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise AcpError(
            jsonrpc.INVALID_PARAMS, f"cwd must be an existing absolute directory: {cwd!r}"
        )
    return os.path.realpath(cwd)


def _session_id(params: dict[str, Any]) -> str:
    sid = params.get("sessionId")
    if not isinstance(sid, str) or not sid:
        raise AcpError(jsonrpc.INVALID_PARAMS, "sessionId (a string) is required")
    return sid


def prompt_text(blocks: object) -> str:
    """The task's text from ACP content blocks: text as is, an embedded resource's text with
    its URI, a link by its URI (the model reads the file with its tools)."""
    if not isinstance(blocks, list):
        raise AcpError(jsonrpc.INVALID_PARAMS, "prompt is a list of content blocks")
    parts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            parts.append(f"{resource.get('uri', '')}:\n{resource.get('text', '')}")
        elif kind == "resource_link":
            parts.append(str(block.get("uri", "")))
    text = "\n\n".join(p for p in parts if p)
    if not text.strip():
        raise AcpError(jsonrpc.INVALID_PARAMS, "the prompt has no text seri can read")
    return text


class AcpAgent:
    def __init__(self, conn: Connection, env: dict[str, str]) -> None:
        self.conn = conn
        self.env = env
        self.initialized = False
        self.sessions: dict[str, tuple[AcpSession, AcpFront]] = {}
        self.running: str = ""
        self.cancelled = False
        self._profile: Profile | None = None
        # Whether the client's initialize offered fs/read_text_file, and fs/write_text_file.
        self.client_fs = (False, False)

    # -- the loop ------------------------------------------------------------------------------

    def serve(self) -> None:
        try:
            while True:
                try:
                    call = self.conn.next_call()
                    if call is None:
                        return
                    self._answer(call)
                except KeyboardInterrupt:
                    continue  # a cancel that came after its turn had ended: nothing to stop
        finally:
            for controller, _front in list(self.sessions.values()):
                self._close(controller)

    def _answer(self, call: ClientMessage) -> None:
        line = self._outcome(call)
        if call.id is not None:
            self.conn.send(line)

    def _outcome(self, call: ClientMessage) -> str:
        """The line that answers ``call``: its result, or the JSON-RPC error it ended in."""
        id_ = call.id if call.id is not None else 0
        try:
            return acp_wire.result(id_, self._handler(call)(self, call.params))
        except AcpError as e:
            return acp_wire.error(id_, e.code, str(e))
        except SeriError as e:
            return acp_wire.error(id_, acp_wire.REFUSED, f"seri: {e}")
        except Exception as e:  # noqa: BLE001 - a bug answers this request, the agent serves on
            import traceback

            print(f"seri acp: internal error in {call.method}: {e!r}", file=sys.stderr)
            if self.env.get("SERI_DEBUG") == "1":
                traceback.print_exc(file=sys.stderr)
            return acp_wire.error(
                id_, jsonrpc.INTERNAL_ERROR, f"internal error: {type(e).__name__}"
            )

    def _handler(self, call: ClientMessage) -> Handler:
        handler = METHODS.get(call.method)
        if handler is None:
            raise AcpError(jsonrpc.METHOD_NOT_FOUND, f"no method {call.method}")
        if not self.initialized and call.method != "initialize":
            raise AcpError(jsonrpc.INVALID_REQUEST, f"{call.method} before initialize")
        return handler

    # -- from the reader thread ----------------------------------------------------------------

    def on_cancel(self, params: dict[str, Any]) -> None:
        sid = params.get("sessionId")
        if sid and sid == self.running:
            self.cancelled = True
            self.sessions[sid][0].cancel()

    def serve_now(self, call: ClientMessage) -> bool:
        """Answer ``call`` on a thread of its own if it may be while a task runs: only what
        reads seri.db (``session/list``, through a read-only connection of its own). Every
        other request waits for the task to end (README: seri acp, one task at a time)."""
        if not self.running or call.method not in SERVED_DURING_A_TASK or call.id is None:
            return False
        from seri.runtime.acp.acp_listing import answer_during_task

        root = str(self.profile.root)
        threading.Thread(
            target=answer_during_task, args=(self.conn, root, call), daemon=True
        ).start()
        return True

    def on_gone(self) -> None:
        if self.running:
            print("seri acp: the client went away mid-turn; ending the turn", file=sys.stderr)
            self.cancelled = True
            self.sessions[self.running][0].cancel()

    # -- methods -------------------------------------------------------------------------------

    def initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        self.initialized = True
        self.client_fs = acp_wire.client_file_system(params.get("clientCapabilities"))
        return {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
                "mcpCapabilities": {"http": False, "sse": False},
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            },
            "authMethods": [
                {
                    "id": "env",
                    "name": f"Set {KEY_VARIABLE}",
                    "description": (
                        f"seri reads its key from {KEY_VARIABLE} (or SERI_API_KEY) in the "
                        "environment the editor starts it with; a server on this machine "
                        "(SERI_BASE_URL) needs none"
                    ),
                    "type": "env_var",
                    "vars": [{"name": KEY_VARIABLE}],
                }
            ],
            "agentInfo": {"name": "seri", "title": "seri", "version": __version__},
        }

    def authenticate(self, params: dict[str, Any]) -> dict[str, Any]:
        from seri.runtime.agent.running import load_settings_warned

        self._need_key(load_settings_warned(self.profile.root))
        return {}

    def _need_key(self, settings: Settings) -> None:
        from seri.runtime.terminal.chat_options import api_key_from

        try:
            api_key_from(self.env, settings.base_url)
        except SeriError as e:
            raise AcpError(acp_wire.AUTH_REQUIRED, f"authentication required: {e}") from e

    @property
    def profile(self) -> Profile:
        if self._profile is None:
            from seri.runtime.session.profile import open_profile

            self._profile = open_profile()
        return self._profile

    def _open(self, cwd: str, resume: str, servers: object) -> tuple[AcpSession, AcpFront]:
        from seri.runtime.acp.acp_session import AcpSession
        from seri.runtime.agent.running import load_settings_warned
        from seri.runtime.terminal.chat_options import ChatOptions

        # Read once a session: its warnings are said once, and the key is looked for in it.
        settings = load_settings_warned(self.profile.root)
        self._need_key(settings)
        if resume and resume in self.sessions:
            raise AcpError(acp_wire.REFUSED, f"session {resume} is already open here")
        from seri.runtime.acp.acp_front import AcpFront
        from seri.runtime.acp.acp_servers import client_servers

        front = AcpFront(self.conn, cwd)
        front.pending_servers = client_servers(servers, cwd, settings)
        controller = AcpSession.open(
            self.profile,
            cwd,
            ChatOptions(resume=resume),
            front,
            settings=settings,
            interactive=True,
            env=self.env,
        )
        assert isinstance(controller, AcpSession)  # open() makes its own class
        front.session_id = controller.start() if not resume else controller.session_id
        front.file_text = self._use_client_files(controller, front.session_id)
        front.window = lambda: controller.window_in_use() or 0
        before = controller.session_usage()
        front.cost = before.cost if before is not None else None
        self.sessions[front.session_id] = (controller, front)
        for note in controller.take_notes():
            print(note, file=sys.stderr)
        return controller, front

    def _use_client_files(self, controller: AcpSession, sid: str) -> FileText:
        """The file tools go through the client's fs methods it offered; what a write would
        change is then shown from the client's buffer too."""
        from seri.runtime.acp.acp_files import ClientFiles

        reads, writes = self.client_fs
        if not (reads or writes):
            return controller.file_text
        files = ClientFiles(self.conn, sid, reads=reads, writes=writes)
        controller.use_files(files)
        return controller.file_text if not reads else files.shown_text(controller.project)

    def new_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = _absolute_dir(params)
        _controller, front = self._open(cwd, "", params.get("mcpServers"))
        front.update(available_commands())
        return {"sessionId": front.session_id}

    def load_session(self, params: dict[str, Any]) -> dict[str, Any]:
        from seri.pure.acp import acp_updates
        from seri.pure.compaction.recap_rendering import render_recap

        cwd = _absolute_dir(params)
        sid = self._known(_session_id(params))
        controller, front = self._open(cwd, sid, params.get("mcpServers"))
        conversation = controller.conversation
        if conversation.recap is not None:
            recap = render_recap(conversation.recap, conversation.pins)
            front.update(acp_updates.chunk("agent_message_chunk", recap))
        for update in acp_updates.replay(conversation.history, controller.project):
            front.update(update)
        front.update(available_commands())
        return {}

    def resume_session(self, params: dict[str, Any]) -> dict[str, Any]:
        cwd = _absolute_dir(params)
        sid = self._known(_session_id(params))
        _controller, front = self._open(cwd, sid, params.get("mcpServers"))
        front.update(available_commands())
        return {}

    def _known(self, sid: str) -> str:
        from seri.io.session.session_table import get_session

        try:
            return get_session(self.profile.store, sid).id
        except SeriError as e:
            raise AcpError(acp_wire.REFUSED, f"no session {sid}") from e

    def close_session(self, params: dict[str, Any]) -> dict[str, Any]:
        sid = _session_id(params)
        held = self.sessions.pop(sid, None)
        if held is None:
            raise AcpError(acp_wire.REFUSED, f"session {sid} is not open here")
        self._close(held[0])
        return {}

    def delete_session(self, params: dict[str, Any]) -> dict[str, Any]:
        from seri.io.session.leases import Lease
        from seri.io.session.session_delete import delete_sessions
        from seri.runtime.session.opening import LEASE_COMMAND

        sid = self._known(_session_id(params))
        if sid == self.running:
            raise AcpError(acp_wire.REFUSED, f"session {sid} is running a task")
        held = self.sessions.pop(sid, None)
        if held is not None:
            self._close(held[0])
        Lease.take(self.profile.store, sid, LEASE_COMMAND).close()  # SessionBusy: held elsewhere
        delete_sessions(self.profile.store, [sid])
        return {}

    def list_sessions(self, params: dict[str, Any]) -> dict[str, Any]:
        from seri.runtime.acp.acp_listing import listed

        return listed(params, self.profile.store)

    def prompt(self, params: dict[str, Any]) -> dict[str, Any]:
        from seri.pure.acp import acp_updates
        from seri.runtime.agent.run_output import unfinished_line

        sid = _session_id(params)
        held = self.sessions.get(sid)
        if held is None:
            raise AcpError(acp_wire.REFUSED, f"session {sid} is not open here (session/load it)")
        text = prompt_text(params.get("prompt"))
        controller, front = held
        if text.startswith("/"):
            try:
                return slash_command(controller, front, text)
            finally:
                front.end_compaction(cancelled=False)
        self.running, self.cancelled = sid, False
        try:
            self._start_client_servers(controller, front)
            end = controller.run_task(text)
        except KeyboardInterrupt:
            return {"stopReason": "cancelled"}
        finally:
            self.running = ""
            front.end_compaction(cancelled=self.cancelled)
        reason = acp_updates.stop_reason(end.status, by_user=end.by_user or self.cancelled)
        if reason is None:
            raise AcpError(jsonrpc.INTERNAL_ERROR, unfinished_line(end, controller.redact))
        return {"stopReason": reason}

    def _start_client_servers(self, controller: AcpSession, front: AcpFront) -> None:
        """The client's MCP servers, once trusted (asked about before the first task)."""
        from seri.runtime.acp.acp_servers import trusted

        waiting, front.pending_servers = front.pending_servers, ()
        if waiting:
            chosen = trusted(self.profile.store, controller.project, waiting, front.ask_server)
            controller.add_servers(chosen)

    def _close(self, controller: AcpSession) -> None:
        try:
            controller.close()
        except Exception as e:  # noqa: BLE001 - one session's close must not stop the others'
            print(f"seri acp: closing session {controller.session_id}: {e}", file=sys.stderr)


Handler = Callable[[AcpAgent, dict[str, Any]], dict[str, Any]]


METHODS: dict[str, Handler] = {
    "initialize": AcpAgent.initialize,
    "authenticate": AcpAgent.authenticate,
    "session/new": AcpAgent.new_session,
    "session/load": AcpAgent.load_session,
    "session/resume": AcpAgent.resume_session,
    "session/close": AcpAgent.close_session,
    "session/delete": AcpAgent.delete_session,
    "session/list": AcpAgent.list_sessions,
    "session/prompt": AcpAgent.prompt,
}
