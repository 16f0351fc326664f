"""A run's events on its session: recorded (when trajectories are on) and watched live.

The recording starts when the session exists (its first task or pin) and ends with the run,
or with /clear (the next session gets a run of its own). Every observer sees every event:
the run's tally first (every model call added up, subagents' too: the cost budget's figure
and the run's usage), then the front-end's, then live OpenTelemetry export when asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from seri import __version__
from seri.io.trajectories.recorder import Recorder
from seri.pure.inputs.settings import Settings
from seri.pure.trajectories.events import Header
from seri.pure.trajectories.redaction import Redactor
from seri.runtime.agent.ports import EventObserver
from seri.runtime.agent.run_output import RunTally
from seri.runtime.session.profile import Profile
from seri.runtime.trajectories.run_events import RunEvents
from seri.runtime.trajectories.telemetry import live_observers


@attrs.frozen
class RunSetup:
    """What a chat run's header says beyond the settings (values of the run)."""

    project: str
    prompt_hashes: tuple[tuple[str, str], ...]
    interactive: bool
    sandbox: str
    tags: tuple[tuple[str, str], ...]


class SessionRecording:
    def __init__(
        self,
        profile: Profile,
        redactor: Redactor,
        observers: Sequence[EventObserver],
        *,
        env: Mapping[str, str],
        settings: Settings,
    ) -> None:
        self._profile = profile
        self._redactor = redactor
        self.tally = RunTally()
        self._observers = (self.tally, *observers, *live_observers(env, settings, redactor))
        # This run's events (None until the session exists).
        self.events: RunEvents | None = None

    def start(self, session_id: str, settings: Settings, header: Callable[[], Header]) -> None:
        from seri.runtime.trajectories.trajectory_start import prune_at_session_start

        prune_at_session_start(self._profile, settings, current_session=session_id)
        recorder = Recorder(
            self._profile.store, session_id, self._redactor, enabled=settings.trajectory_enabled
        )
        self.events = RunEvents(recorder, self._observers)
        self.events.start(header())

    def flush_into(self, conn: Any) -> None:
        """The buffered events, written with the session's next write."""
        if self.events is not None:
            self.events.flush_into(conn)

    def finish(self) -> None:
        """Observers told the run finished (its last events stored already)."""
        if self.events is not None:
            self.events.finish()

    def end(self) -> None:
        """The run's last events stored, its observers told it finished."""
        if self.events is not None:
            events, self.events = self.events, None
            events.flush()
            events.finish()


def run_header(
    settings: Settings, run: RunSetup, *, session: str, run_id: str, max_turns: int
) -> Header:
    """A chat run's header: the settings', and the chat's own fields."""
    header = Header.of(
        settings,
        session=session,
        run=run_id,
        version=__version__,
        started=time.time(),
        prompt_hashes=dict(run.prompt_hashes),
    )
    return attrs.evolve(
        header,
        project=run.project,
        max_turns=max_turns,
        check_command=settings.check_command or None,
        interactive=run.interactive,
        sandbox=run.sandbox,
        tags=dict(run.tags),
    )
