"""The ``FrontEnd`` an ACP client is to a session: what the terminal shows becomes
``session/update`` notifications, what the terminal asks becomes
``session/request_permission``.

One per session the client opened; the session controller drives it exactly as it drives
the terminal's ``ChatView``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from seri.pure.acp import acp_updates
from seri.pure.agent.effects import Answer, AskPerson, ToolRun
from seri.pure.session.records import ToolCall
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.trajectories.event_record import Event
from seri.pure.trajectories.events import ModelCall, SummaryCall
from seri.pure.trajectories.history_events import Compaction, CompactionStart
from seri.runtime.acp.acp_connection import Connection

if TYPE_CHECKING:
    from seri.pure.mcp.mcp_config import McpServerConfig

# The window the next request is sized for (0: not known).
Window = Callable[[], int]
# The text of a project file now (None: none), to show what a write would change.
FileText = Callable[[str], str | None]


class AcpFront:
    # Tool calls are shown: the loop then reads a write's before and after (the diff).
    shows_tools = True

    def __init__(self, conn: Connection, project: str) -> None:
        self.conn = conn
        self.project = project
        self.session_id = ""
        self.window: Window = lambda: 0
        # What the session had cost before this run (None: nothing priced), then added to.
        self.cost: float | None = None
        self.file_text: FileText | None = None
        self._announced: set[str] = set()
        self._compactions = 0
        # The compaction announced and not yet ended ("": none).
        self._compacting = ""
        # The client's MCP servers, asked about (when not approved) before the first task.
        self.pending_servers: tuple[McpServerConfig, ...] = ()

    def update(self, update: dict[str, Any]) -> None:
        self.conn.notify("session/update", {"sessionId": self.session_id, "update": update})

    # -- asked ---------------------------------------------------------------------------------

    def ask(self, request: AskPerson) -> Answer:
        call = request.call
        announced = acp_updates.tool_call(call, request.arguments, self.project)
        self.update(announced)
        self._announced.add(call.id)
        asked = {k: announced[k] for k in ("toolCallId", "title", "kind", "status", "locations")}
        asked["content"] = [*self._proposed(request), *announced.get("content", [])]
        reply = self.conn.ask(
            "session/request_permission",
            {
                "sessionId": self.session_id,
                "toolCall": asked,
                "options": acp_updates.permission_options(request.offered),
            },
        )
        if reply is None:
            return Answer(False, reason="the editor went away before answering")
        if reply.result is None:
            return Answer(False, reason=f"the editor could not ask: {reply.error}")
        meta = reply.result.get("_meta")
        reason = meta.get("reason", "") if isinstance(meta, dict) else ""
        outcome = reply.result.get("outcome")
        return acp_updates.answer_of(outcome, request.offered, str(reason))

    def _proposed(self, request: AskPerson) -> list[dict[str, Any]]:
        """A write's diff, shown with the question (an edit's is shown once it ran)."""
        content = request.arguments.get("content")
        if (
            request.call.name != "write_file"
            or request.path is None
            or not isinstance(content, str)
        ):
            return []
        before = self.file_text(request.path) if self.file_text is not None else None
        return [acp_updates.diff(self.project, request.path, before, content)]

    def approve_server(self, name: str, review: str) -> bool:
        """A project's MCP server not approved here: asked as a client's server is (a yes
        is remembered for the project by the session, as the terminal's is)."""
        return self.ask_server(name, review) != "no"

    def ask_server(self, name: str, review: str) -> str:
        """Whether to start an MCP server: "once", "always" or "no"."""
        from seri.runtime.acp.acp_servers import server_question

        reply = self.conn.ask(
            "session/request_permission", server_question(self.session_id, name, review)
        )
        outcome = reply.result.get("outcome") if reply is not None and reply.result else None
        chosen = (
            outcome.get("optionId")
            if isinstance(outcome, dict) and outcome.get("outcome") == "selected"
            else ""
        )
        return {acp_updates.ALLOW_ONCE: "once", acp_updates.ALLOW_ALWAYS: "always"}.get(
            str(chosen), "no"
        )

    # -- told ----------------------------------------------------------------------------------

    def notice(self, text: str) -> None:
        print(neutralise(text), file=sys.stderr)

    def model_text(self, text: str) -> None:
        self.update(acp_updates.chunk("agent_message_chunk", text))

    def model_reasoning(self, text: str) -> None:
        self.update(acp_updates.chunk("agent_thought_chunk", text))

    def command_output(self, chunk: bytes) -> None:
        return  # bash's output reaches the client with the call's result

    def model_call_started(self, purpose: str) -> None:
        return

    def model_call_finished(self) -> None:
        return  # its usage is told with its recorded event (below), which carries it

    def tool_started(self, call: ToolCall, arguments: Mapping[str, Any]) -> None:
        if call.id in self._announced:
            self.update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call.id,
                    "status": "in_progress",
                }
            )
        else:
            self._announced.add(call.id)
            self.update(acp_updates.tool_call(call, arguments, self.project, "in_progress"))

    def tool_finished(
        self,
        call: ToolCall,
        arguments: Mapping[str, Any],
        run: ToolRun,
        change: tuple[str | None, str | None] | None,
    ) -> None:
        if call.id not in self._announced:  # refused before it started: still shown, failed
            self.update(acp_updates.tool_call(call, arguments, self.project, "pending"))
        self._announced.discard(call.id)
        self.update(acp_updates.tool_call_done(call, arguments, run, change, self.project))

    def recorded(self, event: Event) -> None:
        if isinstance(event, ModelCall | SummaryCall) and event.usage is not None:
            if event.usage.cost is not None:
                self.cost = (self.cost or 0.0) + event.usage.cost
            if isinstance(event, ModelCall):
                used = event.usage.input_tokens + event.usage.output_tokens
                self.update(acp_updates.usage_update(used, self.window(), self.cost))
        if isinstance(event, CompactionStart):
            self.end_compaction(cancelled=False)  # one that never finished is failed first
            self._compactions += 1
            self._compacting = f"{self.session_id}-compaction-{self._compactions}"
            self.update(acp_updates.compaction_started(event, self._compacting))
        elif isinstance(event, Compaction):
            if not self._compacting:  # (a compaction is always announced; this is a guard)
                self._compactions += 1
            number = self._compacting or f"{self.session_id}-compaction-{self._compactions}"
            self._compacting = ""
            self.update(acp_updates.compaction_done(event, number))
        elif isinstance(event, ModelCall):
            # The turn's own call: a compaction announced before it left no recap.
            self.end_compaction(cancelled=False)

    def end_compaction(self, *, cancelled: bool) -> None:
        """Tell the end of a compaction announced and not completed (failed, or cancelled)."""
        if self._compacting:
            number, self._compacting = self._compacting, ""
            self.update(acp_updates.compaction_unfinished(number, cancelled))
