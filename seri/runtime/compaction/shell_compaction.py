"""``seri compact``'s work: read a stored session, compact it, write nothing else."""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

import attrs

from seri.runtime.session.profile import Profile

if TYPE_CHECKING:
    from collections.abc import Sequence

    from seri.io.session.leases import Lease
    from seri.io.session.session_table import SessionState
    from seri.pure.agent.task_records import Conversation
    from seri.pure.compaction.compaction_outcome import NotCompacted
    from seri.pure.inputs.settings import Settings
    from seri.pure.provider.output_budget import OutputBudget
    from seri.pure.tools.tool_specs import ToolSpec
    from seri.pure.trajectories.redaction import Redactor
    from seri.runtime.agent.agent import Agent
    from seri.runtime.agent.ports import EventObserver
    from seri.runtime.provider.model_caller import ModelCaller
    from seri.runtime.trajectories.run_events import RunEvents


class ShellCompaction:
    """``seri compact``: read the session, compact it, write nothing else.

    Unlike ``seri chat`` it never repairs the session on opening. A tool call without a result
    may belong to a ``seri chat`` that is running that tool right now; answering it here
    ("result lost") would give the call two results once the real one arrives. The cut keeps
    the newest call with its results whole anyway, so compaction needs no repair.
    """

    def __init__(
        self,
        profile: Profile,
        session_id: str,
        settings: Settings,
        api_key: str,
        redactor: Redactor,
        lease: Lease | None = None,
        observers: Sequence[EventObserver] = (),
    ) -> None:
        self.profile = profile
        self.store = profile.store
        self.session_id = session_id
        self.settings = settings
        self.api_key = api_key
        self.redactor = redactor
        self._events: RunEvents | None = None
        self.observers = tuple(observers)
        self._caller: ModelCaller | None = None
        # The answer budget of the summarizer's requests, kept from one attempt to the next.
        self.budget: OutputBudget | None = None
        self.lease = lease
        self._prompt: tuple[str, tuple[ToolSpec, ...]] | None = None

    @classmethod
    def open(
        cls, profile: Profile, raw_id: str, *, quiet: bool = False, hold: bool = True
    ) -> ShellCompaction:
        from seri.io.session import session_table
        from seri.io.session.leases import Lease
        from seri.pure.trajectories.redaction import Redactor, secrets_from_environment
        from seri.runtime.agent.running import load_settings_warned
        from seri.runtime.terminal.chat_options import api_key_from
        from seri.runtime.trajectories.telemetry import live_observers

        session_id = session_table.resolve_session_id(profile.store, raw_id)
        settings = load_settings_warned(profile.root)
        # The same model as the session's turns, not whatever this shell would start with.
        model = session_table.get_session(profile.store, session_id).model
        if model:
            settings = attrs.evolve(settings, model=model)
        api_key = api_key_from(os.environ, settings.base_url)
        redactor = Redactor.of((api_key, *secrets_from_environment(os.environ)))
        if not hold:
            return cls(profile, session_id, settings, api_key, redactor)
        # One writer per session: a running chat (or another compact) keeps it; refused.
        lease = Lease.take(profile.store, session_id, "seri compact")
        if not quiet:
            print(f"seri: compacting session {session_id}", file=sys.stderr)
        # Exported live like a chat's run when an endpoint is named (imports nothing else).
        observers = live_observers(os.environ, settings, redactor)
        return cls(profile, session_id, settings, api_key, redactor, lease, observers)

    def attempt(self, focus: str) -> NotCompacted | None:
        """One compaction from a fresh read; None when done, else why not."""
        state, conversation = self.read()
        agent = self.agent(state, self._recording(dict(state.prompt_hashes)))
        end = agent.compact(conversation, focus, "shell")
        self.budget = end.budget
        return end.not_compacted

    def attempts(self, focus: str, tries: int = 2) -> NotCompacted | None:
        """Compact, reading the session again when it changed meanwhile (up to ``tries``
        attempts); None when done, else why not (``Why.NO_CUT``: nothing to compact)."""
        from seri.pure.compaction.compaction_outcome import Why

        why_not = None
        for _attempt in range(tries):
            why_not = self.attempt(focus)
            if why_not is None or why_not.reason is not Why.SESSION_CHANGED:
                break
        return why_not

    def read(self) -> tuple[SessionState, Conversation]:
        """The session's state and conversation, from one point in time (the revision is what
        the swap checks)."""
        from seri.io.agent.goals import carried_pins
        from seri.io.session import conversations, session_table
        from seri.pure.agent.task_records import conversation_of
        from seri.pure.compaction.recap import recap_from_dict

        with self.store.snapshot():
            state = session_table.load_state(self.store, self.session_id)
            history = conversations.load_messages(self.store, self.session_id)
            pins = carried_pins(self.store, self.session_id)
        recap = recap_from_dict(state.recap) if state.recap else None
        conversation = conversation_of(
            history,
            recap,
            state.last_input_tokens,
            token_scale=state.token_scale,
            pins=pins,
            learned_window=state.learned_window,
        )
        return state, conversation

    def agent(self, state: SessionState, events: RunEvents) -> Agent:
        """The compaction agent of the session as it was read: the same window as its chat,
        and the same system prompt and tool definitions filling it."""
        from seri.io.compaction.spill import SPILL_DIR
        from seri.io.session.session_log import SessionLog
        from seri.pure.inputs.settings import DEFAULT_CONTEXT_WINDOW
        from seri.runtime.agent.agent import AgentBrief, AgentPorts, Role, build_agent

        caller = self.model(events)
        system_prompt, counted = self.chat_prompt(state)
        window = self.settings.context_window
        if window is None:
            window = caller.client().context_window(self.settings.model)
        brief = AgentBrief(
            settings=self.settings,
            window=window or DEFAULT_CONTEXT_WINDOW,
            system_prompt=system_prompt,
            project=state.session.project,
            offered=counted,
            budget=self.budget,
        )
        log = SessionLog(self.store, self.session_id, state.revision, pending=events.flush_into)
        ports = AgentPorts(
            model=caller,
            session=log,
            events=events,
            redactor=self.redactor,
            spill_dir=self.profile.root / SPILL_DIR,
        )
        return build_agent(Role.COMPACTION, brief, ports)

    def chat_prompt(self, state: SessionState) -> tuple[str, tuple[ToolSpec, ...]]:
        """The system prompt ``seri chat --resume`` would send now, and the tools it would
        offer beyond the built-in ones: the prompt a chat run freezes at its start from
        AGENTS.md, the rules, the memory files and the Agent Skills' catalogue (with the
        skills' activation tool), not the prompt stored with the session (an imported
        session's own 25k-character prompt, which no chat sends, made ``seri compact`` say
        nothing fits an 8k window the chat compacts fine; a prompt without the catalogue
        made it size a session with skills smaller than its chat does, so the two cut
        differently). Read once per process, as a chat reads it."""
        if self._prompt is None:
            from seri.runtime.session.opening import startup_files

            project = state.session.project or "."
            startup, skills = startup_files(self.store, self.profile.root, project, self.settings)
            self._prompt = (startup.prompt.text, skills.tool())
        return self._prompt

    def _recording(self, prompt_hashes: dict[str, Any]) -> RunEvents:
        from seri import __version__
        from seri.io.trajectories.recorder import Recorder
        from seri.pure.trajectories.events import Header
        from seri.runtime.trajectories.run_events import RunEvents

        if self._events is None:
            settings = self.settings
            recorder = Recorder(
                self.store, self.session_id, self.redactor, enabled=settings.trajectory_enabled
            )
            self._events = RunEvents(recorder, self.observers)
            header = Header.of(
                settings,
                session=self.session_id,
                run=recorder.run_id,
                version=__version__,
                started=time.time(),
                prompt_hashes=prompt_hashes,
            )
            self._events.start(attrs.evolve(header, command="compact"))
        return self._events

    def model(self, events: RunEvents) -> ModelCaller:
        """The model caller, created once (the dry run uses it only to build request bodies)."""
        from seri.runtime.provider.model_caller import ModelCaller

        if self._caller is None:
            self._caller = ModelCaller(self.settings, self.api_key, events, ())
        return self._caller

    def close(self) -> None:
        try:
            if self._events is not None:
                self._events.flush()
            if self._caller is not None:
                self._caller.close()
        finally:
            if self._events is not None:
                self._events.finish()
            if self.lease is not None:
                self.lease.close()
