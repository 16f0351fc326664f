"""The read side of a session controller: what a front-end reads of it, as values.

``SessionController`` inherits these; they only read what the controller keeps (its
conversation, policy, recording, workbench) and hand back frozen records, tuples, numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from seri.io.inputs.prompt_files import StartupFiles
from seri.io.permissions.session_rules import SessionRule
from seri.io.session.pins import list_pins
from seri.io.session.store import Store
from seri.pure.agent.task_records import Conversation
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.settings import Settings
from seri.pure.permissions.permission_policy import Policy
from seri.pure.tools.tool_specs import ToolSpec
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.session.hold import SessionHold
from seri.runtime.session.policy import SessionPolicy
from seri.runtime.session.recording import SessionRecording
from seri.runtime.session.workbench import Workbench

if TYPE_CHECKING:
    from seri.io.mcp.mcp_server_status import McpServerStatus
    from seri.runtime.session.rewind import Turn


class SessionReads:
    # Kept by the controller (see SessionController.__init__).
    project: str
    _settings: Settings
    _conversation: Conversation
    _max_turns: int
    _last_task_turns: int
    _store: Store
    _api_key: str
    _redactor: Redactor
    _policy: SessionPolicy
    _startup: StartupFiles
    _bench: Workbench
    _recording: SessionRecording
    _hold: SessionHold
    _notes: tuple[str, ...]
    _known_models: tuple[str, ...] | None

    # -- what a front-end reads ----------------------------------------------------------------

    @property
    def conversation(self) -> Conversation:
        """The session's history as the next task will send it (a frozen record)."""
        return self._conversation

    @property
    def settings(self) -> Settings:
        """The settings this run works with (the model as /model last set it)."""
        return self._settings

    @property
    def max_turns(self) -> int:
        """The turn budget of each task."""
        return self._max_turns

    @property
    def last_task_turns(self) -> int:
        """The model turns the last task took."""
        return self._last_task_turns

    @property
    def session_id(self) -> str:
        """The session's id ("" until it exists)."""
        return self._hold.session_id

    @property
    def run_id(self) -> str | None:
        """This run's id in the recording (None before the session exists)."""
        events = self._recording.events
        return events.run_id if events is not None else None

    @property
    def policy(self) -> Policy:
        """The permission rules in force: config.json's, --allow's, the session's own."""
        return self._policy.policy

    @property
    def session_rules(self) -> tuple[SessionRule, ...]:
        """The "always" rules given to this session (in this run or an earlier one)."""
        return self._policy.rules

    @property
    def system_prompt(self) -> str:
        return self._startup.prompt.text

    @property
    def mcp_unapproved(self) -> tuple[str, ...]:
        """The project's MCP servers not approved here (not started)."""
        return self._bench.servers.unapproved

    @property
    def known_models(self) -> tuple[str, ...]:
        """The models the server listed, once something asked (for Tab completion)."""
        return self._known_models or ()

    def take_notes(self) -> tuple[str, ...]:
        """The warnings of opening not shown yet (each handed out once)."""
        notes, self._notes = self._notes, ()
        return notes

    def redact(self, text: str) -> str:
        """``text`` as the store keeps it: the key and secret-looking values hidden."""
        return self._redactor.text(text)

    def usage(self) -> UsageTotals:
        """Every model call of this run so far, subagents' included."""
        return self._recording.tally.totals()

    def session_usage(self) -> UsageTotals | None:
        """The whole session's usage as recorded (None: nothing recorded to add up)."""
        if not self.session_id or not self._settings.trajectory_enabled:
            return None
        from seri.io.session.usage_store import session_usage

        if self._recording.events is not None:
            self._recording.events.flush()
        return session_usage(self._store, self.session_id)

    def pins(self) -> tuple[str, ...]:
        return list_pins(self._store, self.session_id) if self.session_id else ()

    def rewind_points(self) -> tuple[tuple[Turn, ...], bool]:
        """The user messages a rewind can go back to (since the last compaction), and
        whether the session's file history is gone (then only its conversation can be)."""
        if not self.session_id:
            return (), False
        from seri.runtime.session.rewind import file_history_gone, turns

        listed = tuple(turns(self._store, self.session_id))
        gone = bool(listed) and file_history_gone(self._store, self.session_id, listed[0].seq)
        return listed, gone

    def context_estimate(self) -> int:
        """What the next request would hold, as the compaction trigger counts it: the history,
        the frozen prompt and the tool definitions (or the last bill, if larger)."""
        from seri.pure.compaction.tokens import history_estimate
        from seri.pure.tools.tool_definitions import tool_definition_chars

        conversation = self._conversation
        offered, deferred = self.offered_tools()
        overhead = len(self.system_prompt) + tool_definition_chars(offered, deferred)
        return history_estimate(conversation.last_input_tokens, conversation.total_chars + overhead)

    def mcp_statuses(self) -> tuple[McpServerStatus, ...]:
        return self._bench.servers.statuses()

    def offered_tools(self) -> tuple[tuple[ToolSpec, ...], bool]:
        """The tools a task offers now, and whether MCP tools go out by name only."""
        return self._bench.servers.offered()

    def file_text(self, raw: str) -> str | None:
        """A project file's text as the tools read it now (to show what a write changes)."""
        from seri.io.tools.shown_file import current_text

        return current_text(Path(self.project), raw)

    def start_window_lookup(self) -> None:
        """Ask the provider for the model's window in the background (for the banner)."""
        self._bench.window.start_lookup()

    def known_window(self, wait: float = 0.0) -> int | None:
        """The window if known by now (waiting up to ``wait`` s for the lookup)."""
        return self._bench.window.known(wait)

    def window_in_use(self, wait: float = 0.0) -> int | None:
        """The window the next request is sized for: the known one, or the smaller one a
        provider's overflow answer stated for this session."""
        return self._bench.window.in_use(self._conversation.learned_window, wait)

    def server_models(self) -> tuple[str, ...] | None:
        """The models ``GET /models`` lists, asked once per run; None if it lists none."""
        if self._known_models is None:
            from seri.io.provider.provider import ProviderClient

            with ProviderClient(self._settings.base_url, self._api_key) as client:
                self._known_models = client.model_ids() or ()
        return self._known_models or None
