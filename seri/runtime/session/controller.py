"""One session as a run has it: opened, leased, running tasks, compacted, pinned, rewound.

``SessionController`` is what every front-end drives: the terminal chat, ``-p``, and
whatever comes next (an ACP server, goals, hooks). It holds no terminal: it is told who
to ask and show things to (``FrontEnd``), who watches the run's events (observers) and
where to say what opening and closing did (``Tell``); it hands back values (``TaskEnd``,
``NotCompacted``, frozen records). A new session starts lazily, with its first task or pin.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from seri.io.agent.goals import carried_pins
from seri.io.session import session_table
from seri.io.session.leases import Lease
from seri.io.session.pins import add_pin
from seri.pure.agent.effects import AskPerson
from seri.pure.agent.task_records import Conversation, TaskEnd
from seri.pure.compaction.compaction_outcome import NO_CUT, NotCompacted
from seri.pure.inputs.settings import Settings
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.trajectories.events import Header, ModelSwitch
from seri.pure.trajectories.redaction import Redactor, secrets_from_environment
from seri.runtime.agent.ports import EventObserver
from seri.runtime.session import opening
from seri.runtime.session.goals import SessionGoals
from seri.runtime.session.hold import SessionHold
from seri.runtime.session.policy import SessionPolicy
from seri.runtime.session.ports import FrontEnd, Tell, ToolHooks, to_stderr
from seri.runtime.session.profile import Profile
from seri.runtime.session.reading import SessionReads
from seri.runtime.session.recording import RunSetup, SessionRecording, run_header
from seri.runtime.session.seat import Seat
from seri.runtime.session.workbench import TaskTerms, Workbench
from seri.runtime.terminal.chat_options import ChatOptions, api_key_from

if TYPE_CHECKING:
    from seri.pure.session.records import MessageKind
    from seri.runtime.agent.agent import Agent
    from seri.runtime.session.rewind import Confirm


class SessionController(SessionGoals, SessionReads):
    """A run's hold on one session (none yet until its first task or pin)."""

    def __init__(
        self,
        profile: Profile,
        project: str,
        options: ChatOptions,
        settings: Settings,
        front: FrontEnd,
        *,
        interactive: bool,
        session_id: str = "",
        lease: Lease | None = None,
        observers: Sequence[EventObserver] = (),
        tell: Tell = to_stderr,
        env: Mapping[str, str] = os.environ,
        hooks: ToolHooks | None = None,
    ) -> None:
        self.started = time.time()
        self.project = project
        self.options = options
        self._settings = settings
        # Whether someone can be asked (tool approvals, MCP servers) and is shown the task.
        self.interactive = interactive
        self._max_turns = options.max_turns or settings.max_turns
        self._conversation = Conversation(())
        self._last_task_turns = 0
        self._task_running = False
        self._store = profile.store
        self._front = front
        self._tell = tell
        self._hooks = hooks
        api_key = api_key_from(env, settings.base_url)
        self._api_key = api_key
        self._redactor = Redactor.of((api_key, *secrets_from_environment(env)))
        # config.json and --allow; the session's stored "always" rules are added to it.
        self._policy = SessionPolicy(
            opening.build_policy(settings, profile.root, options.allow, project)
        )
        self._startup, self.skills = opening.startup_files(
            self._store, profile.root, project, settings
        )
        self._recording = SessionRecording(
            profile, self._redactor, observers, env=env, settings=settings
        )
        self._bench = Workbench(
            profile,
            project,
            settings,
            front,
            interactive=interactive,
            api_key=api_key,
            redactor=self._redactor,
            startup=self._startup,
            protected=self.policy.protected,
            env=env,
        )
        sandbox = self._bench.sandbox
        # What opening found wrong (prompt files skipped, no OS sandbox, MCP servers not
        # started, skills and hooks), for the front-end to show when it likes (take_notes).
        self._notes = opening.opening_notes(self._startup, sandbox, interactive=interactive)
        self._notes += self._bench.servers.notes
        self._notes += self._bench.open_extensions(self.skills, settings.hooks, front.recorded)
        self._run = RunSetup(
            project=project,
            prompt_hashes=self._startup.prompt.hashes,
            interactive=interactive,
            sandbox=sandbox.kind,
            tags=options.tags,
        )
        # The session's own project (an imported session's cwd): recap paths are relative to it.
        self._session_project = project
        # The answer budget as this run has it (None: as config.json sets it); a 402 lowers it
        # for the rest of the run, a new model or session starts from config.json again.
        self._budget: OutputBudget | None = None
        self._frozen_hashes: dict[str, str] = {}
        self._known_models: tuple[str, ...] | None = None
        # The session this run writes (one writer per session: under its lease).
        self._hold = SessionHold(
            self._store, session_id, lease, pending=self._recording.flush_into, tell=tell
        )
        if session_id:
            self._load()
            hashes = self._startup.prompt.hashes
            note = opening.prompt_drift(session_id, self._frozen_hashes, hashes)
            self._notes += (note,) if note else ()

    @classmethod
    def open(
        cls,
        profile: Profile,
        project: str,
        options: ChatOptions,
        front: FrontEnd,
        *,
        settings: Settings,
        interactive: bool,
        observers: Sequence[EventObserver] = (),
        tell: Tell = to_stderr,
        env: Mapping[str, str] = os.environ,
        hooks: ToolHooks | None = None,
    ) -> SessionController:
        """The session ``options`` ask for (new, --continue, --resume, --fork), under its
        lease: one held by another live process is refused (``SessionBusy``)."""
        if options.max_budget_usd is not None:
            settings = attrs.evolve(settings, max_budget_usd=options.max_budget_usd)
        api_key_from(env, settings.base_url)  # no usable key: refused before any lease
        session_id = opening.chosen_session(profile.store, project, options, tell)
        lease = None
        if session_id:
            session_id, lease = opening.claim(
                profile.store, session_id, fork=options.fork, tell=tell
            )
        try:
            return cls(
                profile,
                project,
                options,
                settings,
                front,
                interactive=interactive,
                session_id=session_id,
                lease=lease,
                observers=observers,
                tell=tell,
                env=env,
                hooks=hooks,
            )
        except BaseException:
            if lease is not None:
                lease.close()
            raise

    # -- what a front-end does -----------------------------------------------------------------

    def run_task(self, text: str, turns_used: int = 0, kind: MessageKind = "") -> TaskEnd:
        """Work on ``text`` (of ``kind``) until the model answers without a tool call, or a
        budget ends. Interrupted between effects (Ctrl-C, a full disk), the session is read
        back whole from the store before the exception goes on; a prompt refused before
        anything was stored leaves no empty new session for a later --continue to pick."""
        self._bench.servers.ask(self._front.approve_server)
        new_session = not self.session_id
        self._ensure_session(for_task=True)
        self._refresh_if_changed()
        self._hold.store_repairs()
        agent = self._agent()
        try:
            self._task_running = True
            end = agent.run_task(self._conversation, text, turns_used, kind=kind)
        except BaseException:
            self._reload_quietly()
            raise
        finally:
            self._task_running = False
        if end.status == "refused" and new_session:
            self._bench.close_client()
            self._hold.discard()
            return end
        self._conversation = end.conversation
        self._budget = end.budget
        self._last_task_turns = end.turns
        return end

    def cancel(self) -> bool:
        """End the running task as Ctrl-C (or Esc) does: SIGINT to this process, whose main
        thread runs the task; what was done so far is kept. Callable from any thread;
        False when no task was running."""
        if not self._task_running:
            return False
        import signal  # only a cancel needs it (its enums cost a -p run's start)

        os.kill(os.getpid(), signal.SIGINT)
        return True

    def compact(self, focus: str, trigger: str = "manual") -> NotCompacted | None:
        """Compact now (/compact): None when done, else why not (e.g. not enough history)."""
        if not self.session_id:
            return NO_CUT
        self._ensure_session(for_task=False)
        self._refresh_if_changed()
        end = self._agent().compact(self._conversation, focus, trigger)
        self._conversation = end.conversation
        self._budget = end.budget
        return end.not_compacted

    def pin(self, text: str) -> int:
        """Pin a note every recap carries verbatim (the session starts if it has not);
        its number among the session's pins."""
        self._ensure_session(for_task=False)
        n = add_pin(self._store, self.session_id, text, time.time())
        self._conversation = attrs.evolve(
            self._conversation, pins=carried_pins(self._store, self.session_id)
        )
        return n

    def rewind(
        self, n: int, mode: str, *, yes: bool = False, confirm: Confirm | None = None
    ) -> tuple[str, ...] | None:
        """Put the files, the conversation or both back to just before user message ``n``:
        what was done; None when ``confirm`` declined to overwrite files changed outside
        seri (``yes`` overwrites them unasked; with neither, they are refused). A SeriError
        says why nothing was changed. Files go back where the tools wrote them (an editor's)."""
        from seri.runtime.session.rewind import rewind_session

        sid, files = self.session_id, self._bench.files
        done = rewind_session(self._store, sid, n, mode, yes=yes, confirm=confirm, files=files)
        if done is not None:
            self._load()  # the conversation as the store has it now
        return done

    def set_model(self, name: str) -> None:
        """The rest of this run talks to ``name`` (its window is looked up anew, unless
        config.json sets one); the session row names it from the next task on."""
        self._settings = attrs.evolve(self._settings, model=name)
        self._conversation = attrs.evolve(self._conversation, learned_window=0)
        self._budget = None
        self._bench.switch_model(self._settings)
        self._hold.prompt_again()
        if self._recording.events is not None:
            self._recording.events.record(ModelSwitch(model=name))

    def set_max_turns(self, value: int) -> None:
        """The turn budget of each task from now on (kept with the session)."""
        self._max_turns = value
        if self.session_id:
            session_table.set_max_turns(self._store, self.session_id, value)

    def set_recording(self, on: bool) -> None:
        """/trajectory on|off also applies to the rest of this run, not only the next ones."""
        self._settings = attrs.evolve(self._settings, trajectory_enabled=on)
        if self._recording.events is not None:
            self._recording.events.set_recording(on, self._header)

    def shell_command(self, command: str, on_output: Callable[[bytes], None]) -> str:
        """``!command``: run as bash runs a tool's command, not for the model; its output."""
        return self._bench.shell_command(command, on_output)

    def clear(self) -> str:
        """/clear: a new session in the same project; the old one stays whole. Its id."""
        old = self.session_id
        self._bench.report_usage(self._recording.events, self._tell)
        self._recording.end()
        self._hold.forget()
        self._conversation = Conversation(())
        self._session_project = self.project
        self._bench.close_client()
        self._budget = None
        # "always" was said to the old session: the new one starts from config.json again.
        self._notes += self._policy.apply(())
        return old

    def close(self) -> None:
        """The run's end: its usage told, its last events and the lease's release stored."""
        recording = self._recording
        try:
            self._bench.session_ended(self.interactive)
            self._bench.report_usage(recording.events, self._tell)
            self._bench.close_client()
            # The last recorded events and the lease's release: one transaction.
            if recording.events is not None or self._hold.lease is not None:
                with self._store.write() as conn:
                    recording.flush_into(conn)
                    self._hold.release_in(conn)
        finally:
            recording.finish()
            self._bench.close()
            self._hold.release()

    # -- the stored session and its recording --------------------------------------------------

    def _load(self) -> None:
        loaded = self._hold.read_back(self._settings.model)
        if loaded.project != self.project:
            self._tell(f"seri: note: session {self.session_id} belongs to {loaded.project}")
        self._session_project = loaded.project
        self._conversation = loaded.conversation
        self._frozen_hashes = loaded.prompt_hashes
        self._notes += self._policy.apply(loaded.rules)
        if loaded.max_turns and not self.options.max_turns:
            self._max_turns = loaded.max_turns

    def _reload_quietly(self) -> None:
        try:
            self._load()
        except Exception:  # noqa: BLE001 - the original failure is what the person needs
            self._conversation = Conversation(())
            self._hold.mark_stale()

    def _refresh_if_changed(self) -> None:
        """Another process (``seri compact``) may have rewritten the session meanwhile."""
        if self._hold.changed_elsewhere():
            self._load()

    def _ensure_session(self, *, for_task: bool) -> None:
        created = not self.session_id
        if created:
            prompt = self._startup.prompt
            self._hold.create(self.project, self._settings.model, prompt, self.options.tags)
            if self.interactive:
                self._front.notice(f"seri: new session {self.session_id}")
        elif for_task:
            self._hold.store_prompt(self._startup.prompt, self._settings.model)
        if self._recording.events is None:
            if self.options.tags and not created:
                with self._store.write() as conn:
                    self._hold.store_tags(conn, self.options.tags)
            self._recording.start(self.session_id, self._settings, self._header)
            self._bench.session_started(self.session_id, self._recording.events, not created)

    def _header(self) -> Header:
        events = self._recording.events
        assert events is not None
        return run_header(
            self._settings,
            self._run,
            session=self.session_id,
            run_id=events.run_id,
            max_turns=self._max_turns,
        )

    # -- the agent -----------------------------------------------------------------------------

    def _agent(self) -> Agent:
        """This session's agent, as it stands now (window, policy, turn budget)."""
        events, log = self._recording.events, self._hold.log
        assert events is not None
        assert log is not None
        terms = TaskTerms(
            settings=self._settings,
            session_id=self.session_id,
            session_project=self._session_project,
            policy=self.policy,
            max_turns=self._max_turns,
            budget=self._budget,
        )
        person = Seat(self._front, self._allow_always)
        return self._bench.agent(
            terms,
            session=log,
            events=events,
            person=person,
            spending=self._recording.tally,
            hooks=self._hooks,
        )

    def _allow_always(self, rules: tuple[str, ...], asked: AskPerson) -> None:
        """Keep the rules with the session (the task's own loop adds them for this task);
        the task running goes on under the widened policy, its subagents too."""
        sid, redact = self.session_id, self._redactor.text
        self._notes += self._policy.keep_always(self._store, sid, rules, asked, redact)
        self._bench.widen(self.policy)
