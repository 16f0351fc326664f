"""A session's hooks: read once at start, the project's gated, run when the loop asks.

The person's hooks (config.json ``hooks``) always run. A project's (``.seri/hooks.json``,
``.claude/settings.json``) run only once the person approved each of them for that project,
as it is now: the whole entry's digest, under the same trust model as a project's MCP servers
(``seri.pure.permissions.trust``; ``seri hooks approve``). One not approved is named at start, with
the command that approves it. Every run is recorded (``hook_run``) and shown as one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri.pure.agent.effects import NOTHING, HookDecision
from seri.pure.extensions.hook_decisions import combined, decide
from seri.pure.extensions.hook_events import (
    PERSON_SOURCE,
    POST_TOOL_USE,
    PRE_TOOL_USE,
    PROJECT_SOURCES,
    SESSION_END,
    SESSION_START,
    SUBAGENT_START,
    SUBAGENT_STOP,
    SUBAGENT_TYPE,
    USER_PROMPT_SUBMIT,
)
from seri.pure.extensions.hooks import (
    HookCommand,
    configured_events,
    hook_input,
    matches,
    parse_hooks,
)
from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import BoundedInputError, InputLimits
from seri.pure.trajectories import event_record, events

if TYPE_CHECKING:
    from seri.io.permissions.sandbox import Sandbox
    from seri.io.session.store import Store
    from seri.pure.agent.effects import RunHooks
    from seri.runtime.trajectories.run_events import RunEvents

# A project's settings file larger than this is not read for hooks.
SETTINGS_CAP = 1024 * 1024


@attrs.frozen
class HookSet:
    """The hooks configured for a session: those that run, and the project's waiting ones."""

    hooks: tuple[HookCommand, ...] = ()
    # (hook, its standing: not approved, or changed since approved)
    waiting: tuple[tuple[HookCommand, str], ...] = ()
    problems: tuple[str, ...] = ()

    def notes(self) -> tuple[str, ...]:
        notes = [f"seri: warning: {problem}" for problem in self.problems]
        notes.extend(
            f"seri: project hook not run: {approval_name(hook)} ({hook.command!r}) is "
            f"{state}; review it with `seri hooks list`, approve it with `seri hooks approve`"
            for hook, state in self.waiting
        )
        return tuple(notes)


def approval_name(hook: HookCommand) -> str:
    """What a project hook's approval is kept under: its file and its place there."""
    return f"{hook.source} {hook.name}"


def project_documents(project: Path) -> list[tuple[str, Any, str]]:
    """(source, its ``hooks`` object, why it could not be read) for each project file."""
    from seri.io.inputs.config import read_bounded_text

    found = []
    for source in PROJECT_SOURCES:
        path = project / source
        if not path.is_file():
            continue
        limits = InputLimits(
            source,
            max_line_bytes=SETTINGS_CAP,
            max_message_bytes=SETTINGS_CAP,
            max_total_bytes=SETTINGS_CAP,
        )
        try:
            document = json_text.loads_bounded(read_bounded_text(path, limits), limits)
        except BoundedInputError as exc:
            found.append((source, None, f"{source} was not read for hooks: {exc.reason}"))
            continue
        except (OSError, ValueError) as exc:
            found.append((source, None, f"{source} was not read for hooks: {exc}"))
            continue
        hooks = document.get("hooks") if isinstance(document, dict) else None
        found.append((source, hooks, ""))
    return found


def load_hooks(store: Store, person_hooks: Mapping[str, Any], project: Path) -> HookSet:
    """The person's hooks and the project's, the latter gated by the person's approvals."""
    mine, problems = parse_hooks(dict(person_hooks) or None, PERSON_SOURCE)
    documents = project_documents(project)
    if not documents:
        return HookSet(mine, (), problems) if mine or problems else NO_HOOKS
    from seri.io.mcp.mcp_approvals import approved_digests
    from seri.pure.permissions.trust import APPROVED, HOOK, standing

    approved = approved_digests(store, str(project), HOOK)
    running = list(mine)
    waiting = []
    wrong = list(problems)
    for source, document, unread in documents:
        if unread:
            wrong.append(unread)
            continue
        theirs, their_problems = parse_hooks(document, source)
        wrong.extend(their_problems)
        for hook in theirs:
            state = standing(hook.digest, approved.get(approval_name(hook)))
            if state == APPROVED:
                running.append(hook)
            else:
                waiting.append((hook, state))
    return HookSet(tuple(running), tuple(waiting), tuple(wrong))


NO_HOOKS = HookSet()


class HookHost:
    """Runs a session's hooks for the events the loop (or the chat) reaches."""

    def __init__(
        self,
        hooks: HookSet,
        *,
        project: Path,
        sandbox: Sandbox | None,
        env: Mapping[str, str],
        permission_mode: str = "default",
    ) -> None:
        self.set = hooks
        self.project = project
        self.sandbox = sandbox
        self.env = dict(env)
        self.permission_mode = permission_mode
        self.session_id = ""
        # Where hook runs are recorded (set once the session records), and shown.
        self.events: RunEvents | None = None
        self.show: Callable[[events.HookRun], None] | None = None
        # SessionStart's context, for the model with the next prompt.
        self.pending: list[str] = []
        # The subagent whose loop asks ('' for the session's own): its hooks are told.
        self.agent_id = ""

    def for_child(self, agent_id: str) -> HookHost:
        """The same hooks, for subagent ``agent_id``'s loop: each hook's stdin carries
        ``agent_id`` and ``agent_type``, as Claude Code's do inside a subagent."""
        child = HookHost(
            self.set,
            project=self.project,
            sandbox=self.sandbox,
            env=self.env,
            permission_mode=self.permission_mode,
        )
        child.session_id, child.events, child.show = self.session_id, self.events, self.show
        child.agent_id = agent_id
        return child

    def configured(self, *, child: bool = False) -> frozenset[str]:
        """The events the loop asks about. A subagent's loop: its tool calls' and its end's
        (SubagentStop, in Stop's place), as in Claude Code (its prompt is the parent's
        call; the session's own events are the session's). The session's loop never asks
        SubagentStop."""
        found = configured_events(self.set.hooks)
        if child:
            found = found & {PRE_TOOL_USE, POST_TOOL_USE, SUBAGENT_STOP}
        else:
            found = found - {SUBAGENT_STOP}
        # SessionStart's (or SubagentStart's) context goes with the first prompt.
        return found | {USER_PROMPT_SUBMIT} if self.pending else found

    def answer(self, effect: RunHooks) -> tuple[HookDecision, tuple[events.HookRun, ...]]:
        """The loop's question (an effect): what the hooks decided, and their records. A
        subagent's prompt runs no UserPromptSubmit hook (it is the parent's tool call);
        it only carries SubagentStart's context."""
        if self.agent_id and effect.event == USER_PROMPT_SUBMIT:
            context, self.pending = tuple(self.pending), []
            return HookDecision(context=context), ()
        # SubagentStop's matcher is about the subagent's type (Claude Code's).
        subject = SUBAGENT_TYPE if effect.event == SUBAGENT_STOP else effect.subject
        said, runs = self.run(effect.event, dict(effect.fields), subject, effect.tool_call)
        if effect.event == USER_PROMPT_SUBMIT and self.pending:
            context, self.pending = tuple(self.pending), []
            said = attrs.evolve(said, context=(*context, *said.context))
        return said, runs

    def run(
        self, event: str, fields: Mapping[str, Any], subject: str = "", tool_call: str = ""
    ) -> tuple[HookDecision, tuple[events.HookRun, ...]]:
        chosen = [h for h in self.set.hooks if h.event == event and matches(h, subject)]
        if not chosen:
            return NOTHING, ()
        from seri.io.extensions.hook_runner import run_hook

        common = {
            "session_id": self.session_id,
            "transcript_path": "",
            "cwd": str(self.project),
            "permission_mode": self.permission_mode,
        }
        if self.agent_id:
            common.update(agent_id=self.agent_id, agent_type=SUBAGENT_TYPE)
        stdin = json.dumps(hook_input(event, common, fields), ensure_ascii=False)
        decisions, runs = [], []
        for hook in chosen:
            result = run_hook(
                hook.command,
                stdin,
                cwd=self.project,
                timeout=hook.timeout,
                env=self.env,
                sandbox=self.sandbox if hook.sandbox else None,
            )
            said = decide(event, result)
            decisions.append(said)
            runs.append(_record(hook, result.exit_code, result.seconds, said, tool_call))
        return combined(decisions), tuple(runs)

    def at_session(self, event: str, fields: Mapping[str, Any], subject: str) -> None:
        """SessionStart, SessionEnd or SubagentStart: run, record and show; SessionStart's
        (SubagentStart's) context waits for the next prompt (the subagent's)."""
        if event not in configured_events(self.set.hooks):
            return
        said, runs = self.run(event, fields, subject)
        for run in runs:
            if self.events is not None:
                self.events.record(run)
            if self.show is not None:
                self.show(run)
        if event in (SESSION_START, SUBAGENT_START):
            self.pending.extend(said.context)

    def subagent_start(self) -> None:
        """SubagentStart, in the subagent's host before its first request: it cannot stop
        the subagent; its context goes with the subagent's prompt."""
        self.at_session(SUBAGENT_START, {}, SUBAGENT_TYPE)

    def session_start(self, source: str) -> None:
        self.at_session(SESSION_START, {"source": source}, source)

    def session_end(self, reason: str) -> None:
        self.at_session(SESSION_END, {"reason": reason}, reason)


def _record(
    hook: HookCommand, exit_code: int | None, seconds: float, said: HookDecision, call: str
) -> events.HookRun:
    told = [said.reason, *said.context, *said.notices, said.stop_reason]
    reason = "\n".join(text for text in told if text)
    return events.HookRun(
        event=hook.event,
        command=hook.command,
        source=hook.source,
        exit_code=exit_code,
        seconds=round(seconds, 3),
        decision=said.label,
        reason=reason or event_record.ABSENT,
        tool_call=call or event_record.ABSENT,
    )
