"""The live parts a session's tasks run with, and the agent put together from them.

A session's state (its history, policy, budget, recording) is the controller's; what its
tasks need that is alive is here: the OS sandbox and the environment commands get, the
MCP servers, the model caller (one across tasks: its wire cache, its usage), the window
and the tool host of the task running. All of it is closed with the run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.compaction.spill import SPILL_DIR
from seri.io.inputs.prompt_files import StartupFiles
from seri.io.session.session_log import SessionLog
from seri.pure.inputs.settings import Settings
from seri.pure.permissions.permission_policy import Policy
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.trajectories.events import RunUsage
from seri.pure.trajectories.redaction import Redactor, child_environment
from seri.runtime.agent.agent import Agent, AgentBrief, AgentPorts, Role, build_agent
from seri.runtime.agent.ports import Person, SpendingPort
from seri.runtime.session import opening
from seri.runtime.session.ports import FrontEnd, Tell, ToolHooks
from seri.runtime.session.profile import Profile
from seri.runtime.session.seat import HookedTools
from seri.runtime.session.servers import SessionServers
from seri.runtime.session.window import ModelWindow
from seri.runtime.terminal.chat_options import KEY_VARIABLES
from seri.runtime.trajectories.run_events import RunEvents

if TYPE_CHECKING:
    from seri.io.tools.file_port import FilePort
    from seri.pure.tools.tool_outcome import ToolOutcome
    from seri.pure.trajectories.events import HookRun
    from seri.runtime.extensions.hook_host import HookHost
    from seri.runtime.extensions.skill_catalogue import SkillSet
    from seri.runtime.provider.model_caller import ModelCaller
    from seri.runtime.tools.tool_host import ToolHost


@attrs.frozen
class TaskTerms:
    """What the controller decides a task runs under (values; the agent is made from them)."""

    settings: Settings
    session_id: str
    # The session's own project (an imported session's cwd): recap paths are relative to it.
    session_project: str
    policy: Policy
    max_turns: int
    # The answer budget as the run has it (None: as config.json sets it).
    budget: OutputBudget | None


class Workbench:
    def __init__(
        self,
        profile: Profile,
        project: str,
        settings: Settings,
        front: FrontEnd,
        *,
        interactive: bool,
        api_key: str,
        redactor: Redactor,
        startup: StartupFiles,
        protected: tuple[str, ...],
        env: Mapping[str, str],
    ) -> None:
        self._profile = profile
        self._project = project
        self._front = front
        self._interactive = interactive
        self._api_key = api_key
        self._redactor = redactor
        self._startup = startup
        self.sandbox = opening.open_sandbox(project, protected, env)
        # What bash and the check command get: no API key, no secret-looking variables.
        self.child_env = child_environment(env, KEY_VARIABLES)
        # The session's skills and hooks (README: Hooks and skills), once opened.
        self._skills: SkillSet | None = None
        self._hook_host: HookHost | None = None
        # MCP servers start now, in the background, while the person types.
        self.servers = SessionServers(
            profile.store, settings, project, api_key, will_ask=interactive
        )
        self.window = ModelWindow(settings, api_key)
        self._caller: ModelCaller | None = None
        # The current task's tool host: an "always" given during the task reaches the
        # subagents it starts later in that task (they run under its policy).
        self._tool_host: ToolHost | None = None
        # An editor's buffers the file tools go through (``seri acp``; None: the disk).
        self.files: FilePort | None = None

    def open_extensions(
        self, skills: SkillSet, person_hooks: Mapping[str, Any], show: Callable[[HookRun], None]
    ) -> tuple[str, ...]:
        """The session's skills (their activation tool is offered) and hooks (README: Hooks
        and skills): what was wrong with them, or waits for approval, for the notes."""
        from seri.runtime.extensions.hook_start import open_hooks

        self._skills = skills
        self._hook_host, notes = open_hooks(
            self._profile.store, person_hooks, Path(self._project), self.sandbox,
            self.child_env, show,
        )  # fmt: skip
        return skills.notes() + notes

    def session_started(self, session_id: str, events: RunEvents | None, resumed: bool) -> None:
        from seri.runtime.extensions.hook_start import session_started

        session_started(self._hook_host, session_id, events, resumed=resumed)

    def session_ended(self, interactive: bool) -> None:
        from seri.runtime.extensions.hook_start import session_ended

        session_ended(self._hook_host, interactive)

    def agent(
        self,
        terms: TaskTerms,
        *,
        session: SessionLog,
        events: RunEvents,
        person: Person,
        spending: SpendingPort,
        hooks: ToolHooks | None = None,
    ) -> Agent:
        """The session's agent for one task (or compaction), as things stand now."""
        from seri.runtime.agent.subagent import run_subagent
        from seri.runtime.tools.tool_host import ToolHost, ToolScope, ToolServices

        settings = terms.settings
        window = self._task_window(settings, events)
        self.servers.ready_for_task(events)
        offered, deferred = self.servers.offered()
        if self._skills is not None:
            offered = (*offered, *self._skills.tool())
        scope = ToolScope(
            project=Path(self._project),
            session_id=terms.session_id,
            settings=settings,
            context_window=window,
            redactor=self._redactor,
            api_key=self._api_key,
            startup=self._startup,
            child_env=self.child_env,
        )
        services = ToolServices(
            profile=self._profile,
            events=events,
            sandbox=self.sandbox,
            mcp=self.servers.tools,
            spending=spending,
            start_subagent=run_subagent,
            skills=self._skills,
            hooks=self._hook_host,
            files=self.files,
        )
        tools = ToolHost(scope, terms.policy, services)
        if self._interactive:
            # A command's output shown live under its spinner (the front-end redacts it).
            tools.context = attrs.evolve(tools.context, on_output=self._front.command_output)
        self._tool_host = tools
        brief = AgentBrief(
            settings=settings,
            window=window,
            system_prompt=self._startup.prompt.text,
            project=terms.session_project,
            offered=offered,
            deferred=deferred,
            policy=terms.policy,
            glob_rules=self._startup.glob_rules,
            interactive=self._interactive,
            max_turns=terms.max_turns,
            budget=terms.budget,
        )
        ports = AgentPorts(
            model=self._model(settings, events),
            session=session,
            events=events,
            redactor=self._redactor,
            spill_dir=self._profile.root / SPILL_DIR,
            tools=tools if hooks is None else HookedTools(tools, hooks),
            person=person,
            spending=spending,
            hooks=self._hook_host,
        )
        return build_agent(Role.CHAT, brief, ports)

    def widen(self, policy: Policy) -> None:
        """The task running goes on under ``policy`` (an "always" was just given)."""
        if self._tool_host is not None:
            self._tool_host.policy = policy

    def switch_model(self, settings: Settings) -> None:
        """The next task talks to ``settings.model``: a new caller, its window asked anew."""
        self.close_client()
        self.window = ModelWindow(settings, self._api_key)
        self.window.start_lookup()

    def shell_command(self, command: str, on_output: Callable[[bytes], None]) -> str:
        """A command run as bash runs a tool's (in the project, the sandbox, the environment
        without secrets), not for the model: its output, redacted."""
        from seri.io.tools.shell import run_bash
        from seri.pure.tools.tool_specs import BASH_DEFAULT_TIMEOUT

        result = run_bash(
            command,
            cwd=Path(self._project),
            timeout=BASH_DEFAULT_TIMEOUT,
            spill_dir=self._profile.root / SPILL_DIR,
            redact=self._redactor.text,
            sandbox=self.sandbox,
            env=self.child_env,
            on_output=on_output,
        )
        return self._redactor.text(result.text)

    def check_command(self, command: str, timeout: float) -> ToolOutcome:
        """A goal's check, run as ``shell_command`` runs a command, stopped after
        ``timeout`` seconds: its outcome (exit status, time-out), its text redacted."""
        from seri.io.tools.shell import run_bash

        result = run_bash(
            command,
            cwd=Path(self._project),
            timeout=timeout,
            sandbox=self.sandbox,
            env=self.child_env,
            trusted=True,
        )
        return attrs.evolve(result, text=self._redactor.text(result.text))

    def _model(self, settings: Settings, events: RunEvents) -> ModelCaller:
        if self._caller is None:
            from seri.runtime.provider.model_caller import ModelCaller

            front, streams = self._front, self._interactive
            self._caller = ModelCaller(
                settings,
                self._api_key,
                events,
                self.servers.offered()[0],
                on_text=front.model_text if streams else None,
                on_reasoning=front.model_reasoning if streams else None,
            )
            if streams:
                self._caller.notice = front.notice  # not over the spinner's line
        return self._caller

    def _task_window(self, settings: Settings, events: RunEvents) -> int:
        """The window for the task, recorded once it is known."""

        def ask_provider() -> int | None:
            return self._model(settings, events).client().context_window(settings.model)

        window = self.window.settle(ask_provider)
        event = self.window.unrecorded()
        if event is not None:
            events.record(event)
        return window

    def report_usage(self, events: RunEvents | None, tell: Tell) -> None:
        """At the end of a run: what share of the input came from the prompt cache.

        Recorded as ``run_usage``, and told when caching was asked for (markers were sent)
        or happened, so that a run billed at full price again does not go unnoticed.
        """
        caller = self._caller
        if caller is None or caller.usage.reported == 0:
            return
        usage = caller.usage
        if events is not None:
            events.record(RunUsage.of(usage, cache_markers=caller.cache_markers_sent))
        if caller.cache_markers_sent or usage.cached_tokens:
            tell(f"seri: {usage.summary()}")

    def close_client(self) -> None:
        if self._caller is not None:
            self._caller.close()
            self._caller = None

    def close(self) -> None:
        """The servers and the sandbox (the caller is closed first, with the run's usage)."""
        try:
            self.servers.close()
        finally:
            self.sandbox.close()
