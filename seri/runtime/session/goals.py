"""What a goal needs of a session controller (``seri.runtime.agent.goal_session`` drives it): the
goal kept with the session, its check run as bash runs a tool's command, its events
recorded. ``SessionController`` inherits these."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.agent.goals import StoredGoal, carried_pins, clear_goal, load_goal, note_goal, set_goal
from seri.io.session.store import Store
from seri.pure.agent.task_records import Conversation
from seri.pure.tools.tool_outcome import ToolOutcome
from seri.pure.trajectories import event_record
from seri.runtime.session.recording import SessionRecording
from seri.runtime.session.workbench import Workbench

if TYPE_CHECKING:
    from seri.pure.agent.goals import Goal


class SessionGoals:
    # Kept by the controller (see SessionController.__init__).
    _store: Store
    _conversation: Conversation
    _bench: Workbench
    _recording: SessionRecording

    if TYPE_CHECKING:  # the controller's (SessionReads, SessionController)

        @property
        def session_id(self) -> str: ...

        def _ensure_session(self, *, for_task: bool) -> None: ...

    def goal(self) -> StoredGoal | None:
        """The session's goal as stored (open or met), if it has one."""
        return load_goal(self._store, self.session_id) if self.session_id else None

    def set_goal(self, goal: Goal) -> None:
        """Keep ``goal`` with the session (which starts if it has not): every recap from now
        on carries it, and every task is checked by it."""
        self._ensure_session(for_task=False)
        set_goal(self._store, self.session_id, goal, time.time())
        self._carry_goal()

    def clear_goal(self) -> bool:
        """End the goal (/goal clear): whether there was one."""
        if not self.session_id:
            return False
        had = clear_goal(self._store, self.session_id)
        self._carry_goal()
        return had

    def note_goal(self, ended: str, checks: int) -> None:
        """How the goal stands: ``open`` after a failing check, else how its run ended."""
        note_goal(self._store, self.session_id, ended, checks, time.time())
        self._carry_goal()

    def run_check(self, command: str, timeout: float) -> ToolOutcome:
        """The goal's check, run as bash runs a tool's command (in the project, the sandbox,
        the environment without secrets), stopped after ``timeout`` seconds; its output
        redacted."""
        return self._bench.check_command(command, timeout)

    def record(self, event: event_record.Event) -> None:
        """Record ``event`` in this run's trajectory (and tell its observers)."""
        if self._recording.events is not None:
            self._recording.events.record(event)

    def _carry_goal(self) -> None:
        pins = carried_pins(self._store, self.session_id)
        self._conversation = attrs.evolve(self._conversation, pins=pins)

    def compaction_costs(self, since: float = 0.0) -> dict[str, Any] | None:
        """What the session's compactions from ``since`` on cost (``compaction_costs``)."""
        if not self.session_id:
            return None
        from seri.io.compaction.compaction_costs import costs_since

        return costs_since(self._store, self.session_id, since)
