"""One run of ``seri chat`` on a session: open or create it, run tasks, handle slash commands."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri import __version__
from seri.io import conversations, leases
from seri.io.files import directory_identity
from seri.io.ids import random_id
from seri.io.leases import Lease
from seri.io.pins import list_pins
from seri.io.prompt_files import StartupFiles, load_startup_files
from seri.io.recorder import Recorder
from seri.io.session_log import SessionLog
from seri.io.session_rules import SessionRule, add_session_rules, list_session_rules
from seri.io.spill import SPILL_DIR
from seri.io.terminal import Screen
from seri.pure.compaction_outcome import NO_CUT, NotCompacted
from seri.pure.effects import AskPerson
from seri.pure.errors import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNFINISHED,
    EXIT_USAGE,
    SeriError,
)
from seri.pure.events import ContextWindow, Header, HookRun, ModelSwitch, RunUsage
from seri.pure.output_budget import OutputBudget
from seri.pure.permission_policy import Policy, parse_policy, with_allowed
from seri.pure.protected_paths import protected_paths
from seri.pure.records import Message, MessageKind
from seri.pure.redaction import Redactor, child_environment, secrets_from_environment
from seri.pure.rules import fired_rule_names
from seri.pure.settings import DEFAULT_CONTEXT_WINDOW, Settings
from seri.pure.terminal_text import neutralise
from seri.pure.tokens import messages_chars
from seri.pure.tool_specs import TOOL_SEARCH, ToolSpec, should_defer
from seri.pure.turn import Conversation, TaskEnd, conversation_of
from seri.runtime.agent import PARENT_TOOLS, Agent, Role, build_agent
from seri.runtime.chat_options import KEY_VARIABLES, ChatOptions, api_key_from
from seri.runtime.chat_view import ChatView
from seri.runtime.hook_start import open_hooks, session_ended, session_started
from seri.runtime.model_caller import ModelCaller
from seri.runtime.ports import EventObserver
from seri.runtime.profile import Profile
from seri.runtime.run_events import RunEvents
from seri.runtime.run_output import RunTally
from seri.runtime.skill_catalogue import load_skills
from seri.runtime.subagent import run_subagent
from seri.runtime.telemetry import live_observers
from seri.runtime.tool_host import ToolHost

LEASE_COMMAND = "seri chat"


if TYPE_CHECKING:
    from seri.io.sandbox import Sandbox
    from seri.pure.mcp_config import McpServerConfig
    from seri.runtime.mcp_tools import McpTools
    from seri.runtime.window_lookup import WindowLookup


def build_policy(
    settings: Settings, root: Path, allow: tuple[str, ...], project: str = ""
) -> Policy:
    home = os.path.expanduser("~")
    profile = os.path.realpath(root)
    try:
        policy = parse_policy(
            dict(settings.permissions),
            protected=protected_paths(profile, home),
            home=home,
            project=project,
        )
        return with_allowed(policy, allow)
    except ValueError as exc:
        raise SeriError(f"{exc} (in config.json or --allow)") from exc


class ChatSession:
    """A person's (or script's) seat at one session; a new session starts lazily."""

    def __init__(
        self,
        profile: Profile,
        project: str,
        options: ChatOptions,
        settings: Settings,
        api_key: str,
        session_id: str,
        screen: Screen | None = None,
        *,
        lease: Lease | None = None,
        observers: Sequence[EventObserver] = (),
    ) -> None:
        self.profile = profile
        self.store = profile.store
        self.started = time.time()
        self.project = project
        self.options = options
        self.settings = settings
        self.api_key = api_key
        self.session_id = session_id
        self.interactive = sys.stdin.isatty() and options.prompt is None
        self.redactor = Redactor.of((api_key, *secrets_from_environment(os.environ)))
        # config.json and --allow; the session's stored "always" rules are added to it.
        self.base_policy = build_policy(settings, profile.root, options.allow, project)
        self.policy = self.base_policy
        self.skills = load_skills(self.store, Path(project), profile.root, settings.context_window)
        self.startup: StartupFiles = load_startup_files(
            profile.root, Path(project), (self.skills.prompt_source(),)
        )
        self.sandbox = open_sandbox(project, self.policy.protected)
        # What opening found wrong (prompt files skipped, no OS sandbox): shown by
        # show_notes, at once or, when the session opens behind the prompt, above it.
        self.notes = tuple(f"seri: warning: {w}" for w in self.startup.warnings)
        self.notes += self.skills.notes()
        if self.sandbox.kind == "none":
            self.notes += (no_sandbox_note(self.sandbox.detected.detail),)
        elif self.interactive:  # headless runs name it in the header and the result record
            self.notes += (
                f"seri: bash runs under {self.sandbox.detected.detail} (README: Sandbox)",
            )
        # What bash and the check command get: no API key, no secret-looking variables.
        self.child_env = child_environment(os.environ, KEY_VARIABLES)
        # Hooks (README: Hooks and skills): None when none is configured anywhere.
        self.hooks, hook_notes = open_hooks(
            self.store, settings.hooks, Path(project), self.sandbox, self.child_env, self._hook_ran
        )
        self.notes += hook_notes
        self.max_turns = options.max_turns or settings.max_turns
        # The session's writer, which alone knows the revision this run last saw.
        self.log: SessionLog | None = None
        self.conversation = Conversation(())
        # This run's events (None until the session exists), and who watches them live.
        self.events: RunEvents | None = None
        # Every model call of this run added up (subagents' too): the cost budget's figure,
        # and the result record's usage; it watches the run like any observer. Live
        # OpenTelemetry export, when an endpoint is named, watches the runs too.
        self.tally = RunTally()
        self.observers = (
            self.tally,
            *observers,
            *live_observers(os.environ, settings, self.redactor),
        )
        self._repairs: tuple[Message, ...] = ()
        self._prompt_stored = False
        self.context_window: int | None = settings.context_window
        # The session's own project (an imported session's cwd): recap paths are relative to it.
        self.session_project = project
        self._caller: ModelCaller | None = None
        # The answer budget as this run has it (None: as config.json sets it); a 402 lowers it
        # for the rest of the run, a new model or session starts from config.json again.
        self.budget: OutputBudget | None = None
        self._window_lookup: WindowLookup | None = None
        # Where the window in use came from ("server", "default") until it is recorded.
        self._window_source = ""
        # The prompt files' hashes stored with the session (as its last run froze them).
        self._frozen_hashes: dict[str, str] = {}
        # Allow rules a person added with "always" to this session, in this run or an
        # earlier one (stored with the session; see /permissions).
        self.session_rules: tuple[SessionRule, ...] = ()
        self.last_task_turns = 0
        # The models the server lists, once /model has asked (None: it lists none).
        self.known_models: tuple[str, ...] = ()
        self._models_asked = False
        self.view = ChatView(screen or Screen(), interactive=self.interactive)
        self.view.redact = self.redactor.text
        # MCP servers start now, in the background, while the person types; the project's
        # servers not approved are named (for /mcp).
        self.mcp_unapproved: tuple[str, ...] = ()
        self._mcp_to_ask: tuple[McpServerConfig, ...] = ()
        self.mcp = self._start_mcp()
        # The current task's tool host: an "always" given during the task reaches the
        # subagents it starts later in that task (they run under its policy).
        self._tool_host: ToolHost | None = None
        # One writer per session: the lease on the session this chat writes (see leases).
        self.lease = lease
        if session_id:
            self._load()
            self._note_prompt_drift()
        self.view.had_recap = self.conversation.recap is not None

    # -- opening -------------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        profile: Profile,
        project: str,
        options: ChatOptions,
        *,
        settings: Settings | None = None,
        screen: Screen | None = None,
        show_notes: bool = True,
        observers: Sequence[EventObserver] = (),
    ) -> ChatSession:
        """``settings`` when the caller has read them already (their warnings shown),
        ``screen`` when it has started writing to the terminal; ``show_notes=False`` when
        the caller shows the opening's warnings itself (above a prompt already drawn);
        ``observers`` watch each run's events live (see ``EventObserver``)."""
        if settings is None:
            from seri.runtime.running import load_settings_warned

            settings = load_settings_warned(profile.root)
            if options.model:
                settings = attrs.evolve(settings, model=options.model)
        if options.max_budget_usd is not None:
            settings = attrs.evolve(settings, max_budget_usd=options.max_budget_usd)
        api_key = api_key_from(os.environ, settings.base_url)
        session_id = ""
        if options.resume:
            session_id = conversations.resolve_session_id(profile.store, options.resume)
        elif options.continue_last:
            last = conversations.most_recent_session(profile.store, project)
            if last is None:
                print(
                    "seri: no earlier session in this directory; starting a new one",
                    file=sys.stderr,
                )
            else:
                session_id = last.id
        lease = None
        if session_id:
            session_id, lease = _claim(profile, session_id, fork=options.fork)
        try:
            chat = cls(
                profile,
                project,
                options,
                settings,
                api_key,
                session_id,
                screen,
                lease=lease,
                observers=observers,
            )
        except BaseException:
            if lease is not None:
                lease.close()
            raise
        if options.prompt is not None:
            # A -p run asks for the window (when config.json sets none) while it opens the
            # session, not after: GET /models goes out beside the store's first writes.
            chat.start_window_lookup()
        if show_notes:
            chat.show_notes()
        if session_id and not chat.interactive and not options.fork:
            print(f"seri: resumed session {session_id}", file=sys.stderr)
        return chat

    def _start_mcp(self) -> McpTools | None:
        """Start the MCP servers that may start (the person's, and the project's approved
        ones); what was not started, and why, goes into the notes."""
        settings = self.settings
        if not settings.mcp_servers and not os.path.exists(Path(self.project) / ".mcp.json"):
            return None  # (seri.pure.mcp_startup.PROJECT_FILE: not imported without servers)
        from seri.runtime.mcp_tools import McpTools, start_plan

        plan = start_plan(self.store, settings, Path(self.project))
        self.notes += plan.notices(will_ask=self.interactive)
        self.mcp_unapproved = tuple(server.name for server in plan.unapproved)
        self._mcp_to_ask = plan.unapproved if self.interactive else ()
        if not plan.start and not self._mcp_to_ask:
            return None
        return McpTools.start(plan, Path(self.project), (self.api_key,))

    def _ask_about_servers(self) -> None:
        """On a terminal, before the first task: whether to start each project server not
        approved here; a yes is remembered for this project (as `seri mcp approve` does) and
        starts the server now, so the task can use it."""
        waiting, self._mcp_to_ask = self._mcp_to_ask, ()
        read = self.view.read_line
        if not waiting or read is None or self.mcp is None:
            return
        from seri.runtime.mcp_review import remember_approved, review_text

        chosen = []
        for server in waiting:
            self.view.notice(review_text(server, self.store, Path(self.project)))
            answer = read("  start it, now and in later chats here? [y/N] ")
            if answer.strip().lower() in ("y", "yes"):
                chosen.append(server)
        if chosen:
            remember_approved(self.store, Path(self.project), chosen)
            self.mcp.add(tuple(chosen))
            started = {server.name for server in chosen}
            self.mcp_unapproved = tuple(n for n in self.mcp_unapproved if n not in started)

    def offered_tools(self) -> tuple[tuple[ToolSpec, ...], bool]:
        """The tools a task offers now (built-in, then those of MCP servers up), and whether
        MCP tools go out by name only (then with tool_search)."""
        if self.mcp is None:
            return (*PARENT_TOOLS, *self.skills.tool()), False
        found = self.mcp.specs()
        deferred = should_defer(found, self.settings.mcp_tool_search_threshold)
        searched = (TOOL_SEARCH,) if deferred else ()
        return (*PARENT_TOOLS, *self.skills.tool(), *found, *searched), deferred

    def show_notes(self) -> None:
        """The warnings of opening, once."""
        notes, self.notes = self.notes, ()
        for note in notes:
            print(neutralise(note), file=sys.stderr)

    def _load(self) -> None:
        """Read the session back, in one snapshot.

        A kill -9 mid-turn may have left tool calls without results: they get synthetic
        results in memory now, stored only when this process goes on with the session
        (another live process may still be about to store the real ones).
        """
        with self.store.snapshot():
            state = conversations.load_state(self.store, self.session_id)
            history = conversations.load_messages(self.store, self.session_id)
        self._repairs = tuple(_missing_results(history))
        history = (*history, *self._repairs)
        if state.session.project != self.project:
            print(
                f"seri: note: session {self.session_id} belongs to {state.session.project}",
                file=sys.stderr,
            )
        recap = None
        if state.recap:
            from seri.pure.recap import recap_from_dict  # a new session has none to load

            recap = recap_from_dict(state.recap)
        self.session_project = state.session.project
        self.conversation = conversation_of(
            history,
            recap,
            state.last_input_tokens,
            # The store keeps the running count: no recount of the whole history on resume.
            total_chars=state.total_chars + messages_chars(self._repairs),
            fired_rules=fired_rule_names(history, state.recap),
            token_scale=state.token_scale,
            pins=list_pins(self.store, self.session_id),
            # Learned for the model the session last ran with; another model's window is its own.
            learned_window=(
                state.learned_window if state.session.model == self.settings.model else 0
            ),
        )
        self.log = self._log(state.revision)
        self._frozen_hashes = state.prompt_hashes
        self._apply_session_rules(list_session_rules(self.store, self.session_id))
        if state.max_turns and not self.options.max_turns:
            self.max_turns = state.max_turns

    def _note_prompt_drift(self) -> None:
        """On resume: name the prompt files (AGENTS.md, rules, memory) that changed since the
        session's prompt was last frozen (shown with the opening's other notes)."""
        from seri.pure.prompt_drift import drift_note, prompt_changes

        changes = prompt_changes(self._frozen_hashes, dict(self.startup.prompt.hashes))
        note = drift_note(self.session_id, changes)
        if note:
            self.notes += (note,)

    def _log(self, revision: int) -> SessionLog:
        return SessionLog(self.store, self.session_id, revision, pending=self._flush_recordings)

    def _flush_recordings(self, conn: Any) -> None:
        if self.events is not None:
            self.events.flush_into(conn)

    def _store_repairs(self) -> None:
        if self._repairs:
            assert self.log is not None
            self.log.append(self._repairs)
            self._repairs = ()

    def _reload_quietly(self) -> None:
        try:
            self._load()
        except Exception:  # noqa: BLE001 - the original failure is what the person needs
            self.conversation = Conversation(())
            if self.log is not None:
                self.log.revision = -1  # forces a reload before the next task

    def reload(self) -> None:
        """Read the session back from the store after something else changed it."""
        if self.session_id:
            self._load()

    def _ensure_session(self, *, for_task: bool = True) -> None:
        created = not self.session_id
        if created:
            self.session_id = random_id()
            me = leases.this_process(LEASE_COMMAND)
            with self.store.write() as conn:
                conversations.create_session(
                    self.store,
                    session_id=self.session_id,
                    project=self.project,
                    now=time.time(),
                    model=self.settings.model,
                    system_prompt=self.startup.prompt.text,
                    prompt_hashes=dict(self.startup.prompt.hashes),
                    project_identity=directory_identity(Path(self.project)),
                )
                self._store_tags(conn)
                leases.take_in(conn, self.session_id, me)
            self.lease = leases.Lease(self.store, self.session_id, me)
            self.log = self._log(0)
            self._prompt_stored = True
            if self.interactive:
                self.view.notice(f"seri: new session {self.session_id}")
        elif for_task and not self._prompt_stored:
            # This run's frozen prompt is the session's from now on (see README).
            assert self.log is not None
            prompt = self.startup.prompt
            self.log.store_prompt(prompt.text, dict(prompt.hashes), self.settings.model)
            self._prompt_stored = True
        if self.events is None:
            if self.options.tags and not created:
                with self.store.write() as conn:
                    self._store_tags(conn)
            self._start_recording()
            session_started(self.hooks, self.session_id, self.events, resumed=not created)

    def _hook_ran(self, run: HookRun) -> None:
        self.view.recorded(run)

    def _store_tags(self, conn: Any) -> None:
        """This run's tags onto the session (the tag store is loaded only when there are)."""
        if self.options.tags:
            from seri.io.session_tags import tag_session

            tag_session(conn, self.session_id, self.options.tags)

    def _start_recording(self) -> None:
        from seri.runtime.trajectory_start import prune_at_session_start

        prune_at_session_start(self.profile, self.settings, current_session=self.session_id)
        recorder = Recorder(
            self.store, self.session_id, self.redactor, enabled=self.settings.trajectory_enabled
        )
        self.events = RunEvents(recorder, self.observers)
        self.events.start(self.header())

    def set_recording(self, on: bool) -> None:
        """/trajectory on|off also applies to the rest of this run, not only the next ones."""
        self.settings = attrs.evolve(self.settings, trajectory_enabled=on)
        if self.events is not None:
            self.events.set_recording(on, self.header)

    def header(self) -> Header:
        assert self.events is not None
        header = Header.of(
            self.settings,
            session=self.session_id,
            run=self.events.run_id,
            version=__version__,
            started=time.time(),
            prompt_hashes=dict(self.startup.prompt.hashes),
        )
        return attrs.evolve(
            header,
            project=self.project,
            max_turns=self.max_turns,
            check_command=self.settings.check_command or None,
            interactive=self.interactive,
            sandbox=self.sandbox.kind,
            tags=dict(self.options.tags),
        )

    # -- running -------------------------------------------------------------------------------

    def _model(self) -> ModelCaller:
        if self._caller is None:
            assert self.events is not None
            view = self.view
            self._caller = ModelCaller(
                self.settings,
                self.api_key,
                self.events,
                self.offered_tools()[0],
                on_text=view.model_text if self.interactive else None,
                on_reasoning=view.model_reasoning if self.interactive else None,
            )
            if self.interactive:
                self._caller.notice = view.notice  # not over the spinner's line
        return self._caller

    def start_window_lookup(self) -> None:
        """Ask the provider for the model's window in the background (for the banner)."""
        if self.context_window is None and self._window_lookup is None:
            from seri.runtime.window_lookup import WindowLookup  # none with a window in config

            self._window_lookup = WindowLookup(self.settings, self.api_key)

    def known_window(self, wait: float = 0.0) -> int | None:
        """The window if known by now (waiting up to ``wait`` s for the lookup)."""
        lookup = self._window_lookup
        if self.context_window is None and lookup is not None and lookup.done(wait):
            self.context_window = lookup.window or DEFAULT_CONTEXT_WINDOW
            self._window_source = "server" if lookup.window else "default"
            self._window_lookup = None
        return self.context_window

    def window_in_use(self, wait: float = 0.0) -> int | None:
        """The window the next request is sized for, as shown (banner, /status): the known
        one, or the smaller one a provider's overflow answer stated for this session."""
        known = self.known_window(wait)
        learned = self.conversation.learned_window
        if known is not None and 0 < learned < known:
            return learned
        return known

    def _window(self) -> int:
        if self.known_window(wait=30.0) is None:
            reported = self._model().client().context_window(self.settings.model)
            self.context_window = reported or DEFAULT_CONTEXT_WINDOW
            self._window_source = "server" if reported else "default"
        if self._window_source and self.events is not None:
            # The header has the configured window (null here); this is the one used.
            assert self.context_window is not None
            self.events.record(ContextWindow(tokens=self.context_window, from_=self._window_source))
            self._window_source = ""
        assert self.context_window is not None
        return self.context_window

    def _agent(self) -> Agent:
        """This session's agent, as it stands now (window, policy, turn budget)."""
        assert self.events is not None
        assert self.log is not None
        window = self._window()
        if self.mcp is not None:
            self.mcp.wait_first(self.settings.mcp_startup_wait, self.events)
            self.mcp.tell(self.events)
        offered, deferred = self.offered_tools()
        tools = ToolHost(
            project=Path(self.project),
            profile=self.profile,
            settings=self.settings,
            session_id=self.session_id,
            events=self.events,
            redactor=self.redactor,
            policy=self.policy,
            api_key=self.api_key,
            context_window=window,
            startup=self.startup,
            sandbox=self.sandbox,
            child_env=self.child_env,
            start_subagent=run_subagent,
            mcp=self.mcp,
            spending=self.tally,
        )
        if self.interactive:
            # A command's output shown live under its spinner (the view redacts it).
            tools.context = attrs.evolve(tools.context, on_output=self.view.command_output)
        tools.skills, tools.hooks = self.skills, self.hooks
        self._tool_host = tools
        return build_agent(
            Role.CHAT,
            settings=self.settings,
            api_key=self.api_key,
            window=window,
            system_prompt=self.startup.prompt.text,
            project=self.session_project,
            session=self.log,
            events=self.events,
            redactor=self.redactor,
            spill_dir=self.profile.root / SPILL_DIR,
            tools=tools,
            offered=offered,
            deferred=deferred,
            person=self._person(tools),
            policy=self.policy,
            glob_rules=self.startup.glob_rules,
            interactive=self.interactive,
            max_turns=self.max_turns,
            caller=self._model(),
            budget=self.budget,
            spending=self.tally,
            hooks=self.hooks,
        )

    def _person(self, tools: ToolHost) -> ChatView:
        """The view, as the one the interpreter tells and asks: it shows a write's diff from
        the file as the tools read it, and an "always" widens the policy of this run."""
        view = self.view
        view.read_file = tools.current_text
        view.on_always = self._allow_always
        return view

    def _allow_always(self, rules: tuple[str, ...], asked: AskPerson) -> None:
        """Keep the rules with the session (the task's own loop adds them for this task)."""
        arguments = asked.arguments
        subject = arguments.get("command") if asked.call.name == "bash" else asked.path
        subject = self.redactor.text(subject if isinstance(subject, str) else "")
        add_session_rules(
            self.store,
            self.session_id,
            rules,
            tool=asked.call.name,
            subject=subject,
            now=time.time(),
        )
        self._apply_session_rules(list_session_rules(self.store, self.session_id))
        if self._tool_host is not None:
            self._tool_host.policy = self.policy

    def _apply_session_rules(self, stored: tuple[SessionRule, ...]) -> None:
        """The policy of this run: config.json and --allow, then the session's own rules.

        A stored rule this seri cannot read (written by another version) is left out, said
        once; config.json's deny and ask rules still come before any of them.
        """
        usable = []
        for rule in stored:
            try:
                with_allowed(self.base_policy, (rule.rule,))
            except ValueError as exc:
                self.notes += (f"seri: warning: session rule {rule.rule!r} left out: {exc}",)
                continue
            usable.append(rule)
        self.session_rules = tuple(usable)
        self.policy = with_allowed(self.base_policy, (rule.rule for rule in usable))

    def run_task(self, text: str, kind: MessageKind = "") -> TaskEnd:
        self._ask_about_servers()
        new_session = not self.session_id
        self._ensure_session()
        self._refresh_if_changed()
        self._store_repairs()
        agent = self._agent()
        try:
            end = agent.run_task(self.conversation, text, kind=kind)
        except BaseException:
            # Interrupted or failed between effects (Ctrl-C, a full disk): part of the turn
            # may be stored. The store is the truth; read it back whole before going on
            # (a reload that fails itself marks the view stale, see _reload_quietly).
            self._reload_quietly()
            raise
        finally:
            self.view.close()
        if end.status == "refused" and new_session:
            # The prompt was refused before anything of it was stored: no empty session is
            # left behind for a later --continue to pick.
            self._discard_new_session()
            return end
        self.conversation = end.conversation
        self.budget = end.budget
        self.last_task_turns = end.turns
        return end

    def _discard_new_session(self) -> None:
        """Forget the session this run just created for a task that stored nothing."""
        self.recorder = None
        self._close_client()
        discarded = self.session_id
        self._release()
        self.session_id = ""
        self.log = None
        self._prompt_stored = False
        conversations.discard_empty_session(self.store, discarded)

    def _refresh_if_changed(self) -> None:
        """Another process (``seri compact``) may have rewritten the session meanwhile."""
        assert self.log is not None
        if self.log.stored_revision() != self.log.revision:
            self._load()

    def one_shot(self, text: str) -> int:
        end = self.run_task(text)
        return self.report(end, print_answer=True)

    def report(self, end: TaskEnd, *, print_answer: bool) -> int:
        """A task's end for the person (the answer, or why it did not finish): its status."""
        streamed = self.view.answer_was_streamed()
        if end.status == "done":
            if print_answer or (self.interactive and not streamed and end.answer):
                # Redacted as the store has it (the key the model quoted is [REDACTED]).
                self.view.show_answer(self.redactor.text(end.answer))
            return EXIT_OK
        if end.by_user and self.interactive:
            key = self.view.stop_key()
            self.view.notice(f"seri: cancelled ({key}); what was done so far is kept")
        elif end.status == "refused":
            message = neutralise(f"seri: {self.redactor.text(end.detail)}")
            if self.interactive:
                self.view.notice(message)
            else:
                print(message, file=sys.stderr)
            return EXIT_USAGE
        else:
            detail = self.redactor.text(end.detail)
            message = neutralise(f"seri: task not finished ({end.status}): {detail}")
            if self.interactive:
                self.view.notice(message)
            else:
                print(message, file=sys.stderr)
        return EXIT_INTERRUPTED if end.by_user else EXIT_UNFINISHED

    def ensure_session(self) -> None:
        """Create the session now if this run has none yet (a pin needs one to belong to)."""
        self._ensure_session(for_task=False)

    def compact(self, focus: str, trigger: str = "manual") -> NotCompacted | None:
        """/compact: None when done, else why not (e.g. not enough history)."""
        if not self.session_id:
            return NO_CUT
        self._ensure_session(for_task=False)
        self._refresh_if_changed()
        end = self._agent().compact(self.conversation, focus, trigger)
        self.conversation = end.conversation
        self.budget = end.budget
        return end.not_compacted

    def set_model(self, name: str) -> None:
        """/model NAME: the rest of this run talks to ``name`` (its window is looked up anew,
        unless config.json sets one); the session row names it from the next task on."""
        self.settings = attrs.evolve(self.settings, model=name)
        self.conversation = attrs.evolve(self.conversation, learned_window=0)
        self._close_client()
        self._caller = None
        self.budget = None
        self.context_window = self.settings.context_window
        self._window_lookup = None
        self._window_source = ""
        self.start_window_lookup()
        self._prompt_stored = False
        if self.events is not None:
            self.events.record(ModelSwitch(model=name))

    def set_max_turns(self, value: int) -> None:
        self.max_turns = value
        if self.session_id:
            conversations.set_max_turns(self.store, self.session_id, value)

    def server_models(self) -> tuple[str, ...] | None:
        """The models ``GET /models`` lists, asked once per run; None if it lists none."""
        if not self._models_asked:
            from seri.io.provider import ProviderClient

            with ProviderClient(self.settings.base_url, self.api_key) as client:
                self.known_models = client.model_ids() or ()
            self._models_asked = True
        return self.known_models or None

    def clear(self) -> str:
        """/clear: a new session in the same project; the old one stays whole."""
        old = self.session_id
        self._report_usage()
        if self.events is not None:
            self.events.flush()
            self.events.finish()
        self._release()
        self.session_id = ""
        self._prompt_stored = False
        self._repairs = ()
        self.conversation = Conversation(())
        self.session_project = self.project
        self.events = None
        self.log = None
        self._close_client()
        self._caller = None
        self.budget = None
        # "always" was said to the old session: the new one starts from config.json again.
        self._apply_session_rules(())
        return old

    def close(self) -> None:
        try:
            session_ended(self.hooks, self.interactive)
            self._report_usage()
            self._close_client()
            # The last recorded events and the lease's release: one transaction.
            if self.events is not None or self.lease is not None:
                with self.store.write() as conn:
                    if self.events is not None:
                        self.events.flush_into(conn)
                    if self.lease is not None:
                        self.lease.close_in(conn)
                        self.lease = None
        finally:
            if self.events is not None:
                self.events.finish()
            if self.mcp is not None:
                self.mcp.close()
            self.sandbox.close()
            self._release()

    def _release(self) -> None:
        if self.lease is not None:
            lease, self.lease = self.lease, None
            try:
                lease.close()
            except Exception:  # noqa: BLE001 - the next run takes over a lease left behind
                print(
                    f"seri: note: session {lease.session_id} is still marked in use by "
                    "this process; the next seri will take it over",
                    file=sys.stderr,
                )

    def _report_usage(self) -> None:
        """At the end of a run: what share of the input came from the prompt cache.

        Recorded as ``run_usage``, and told on stderr when caching was asked for (markers were
        sent) or happened, so that a run billed at full price again does not go unnoticed.
        """
        caller = self._caller
        if caller is None or caller.usage.reported == 0:
            return
        usage = caller.usage
        if self.events is not None:
            self.events.record(RunUsage.of(usage, cache_markers=caller.cache_markers_sent))
        if caller.cache_markers_sent or usage.cached_tokens:
            print(f"seri: {usage.summary()}", file=sys.stderr)

    def _close_client(self) -> None:
        if self._caller is not None:
            self._caller.close()
            self._caller = None


def open_sandbox(project: str, protected: tuple[str, ...]) -> Sandbox:
    """The OS sandbox for this run's commands; with none, seri says so once, at start."""
    from seri.io.sandbox import CHOICES, Sandbox, detect

    choice = os.environ.get("SERI_SANDBOX", "").strip().lower() or "auto"
    if choice not in CHOICES:
        raise SeriError(f"SERI_SANDBOX must be one of {', '.join(CHOICES)}, not {choice!r}")
    detected = detect(choice, probe=False)
    return Sandbox(detected, Path(project), protected, choice=choice)


def no_sandbox_note(detail: str) -> str:
    return (
        f"seri: warning: bash runs without an OS sandbox ({detail}); only the permission "
        "policy keeps it from writing outside the project (README: Sandbox)"
    )


def _claim(profile: Profile, session_id: str, *, fork: bool) -> tuple[str, Lease]:
    """The session this chat will write, with its lease: the one asked for, or a copy.

    Without --fork a session leased by another live process is refused (SessionBusy names
    the holder); with --fork the chat goes on in a new session with the same history.
    """
    store = profile.store
    if not fork:
        return session_id, leases.Lease.take(store, session_id, LEASE_COMMAND)
    fork_id = random_id()
    me = leases.this_process(LEASE_COMMAND)
    with store.write() as conn:
        conversations.fork_session(conn, session_id, fork_id, time.time())
        leases.take_in(conn, fork_id, me)
    print(f"seri: forked session {session_id} into {fork_id}", file=sys.stderr)
    return fork_id, leases.Lease(store, fork_id, me)


def _missing_results(history: tuple[Message, ...]) -> list[Message]:
    """Synthetic results for the tool calls of the last assistant message left unanswered."""
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "assistant":
            answered = {m.tool_call_id for m in history[index + 1 :] if m.role == "tool"}
            return [
                Message(
                    role="tool",
                    text="result lost: seri stopped before this tool call finished",
                    tool_call_id=call.id,
                    tool_name=call.name,
                    is_error=True,
                    kind="synthetic",
                )
                for call in message.tool_calls
                if call.id not in answered
            ]
        if message.role != "tool":
            return []
    return []
