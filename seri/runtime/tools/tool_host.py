"""Running tool calls for the agent loop: checkpoints first, checks after, subagents, memory.

The file and shell tools themselves live in ``seri.io.tools.tools``; this host adds
what a session needs around them: the prior content of every file before
``write_file`` or ``edit`` touches it, the project's check command after a
successful write, the ``task`` tool's child agent and the ``remember`` tool's
staged memory entries.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from seri.io.tools import memory_store
from seri.io.tools.file_port import ReadOnce, held_bytes
from seri.io.tools.files import (
    NotAFileError,
    PathRefusedError,
    default_protected,
    project_root,
    refuse_non_regular,
    relative_name,
)
from seri.io.tools.files import resolve_in_project as confine
from seri.io.tools.shown_file import current_text
from seri.io.tools.tool_context import ToolContext
from seri.pure.agent.effects import ResolvedPath, ToolRun
from seri.pure.inputs.settings import Settings
from seri.pure.mcp.mcp_names import PREFIX as MCP_PREFIX
from seri.pure.permissions.permission_policy import PROTECTED_RULE, Policy
from seri.pure.session.records import ToolCall
from seri.pure.tools.tool_definitions import search_tools
from seri.pure.tools.tool_outcome import ToolOutcome
from seri.pure.tools.tool_specs import FILE_CAP_BYTES, SPECS, ToolSpec, find_spec, spec_of
from seri.pure.trajectories.redaction import Redactor
from seri.pure.trajectories.tool_events import CheckpointEvent, Denial, Edit, MemoryStaged

if TYPE_CHECKING:
    from seri.io.inputs.prompt_files import StartupFiles
    from seri.io.permissions.sandbox import Sandbox
    from seri.io.tools.file_port import FilePort
    from seri.runtime.agent.ports import SpendingPort
    from seri.runtime.extensions.hook_host import HookHost
    from seri.runtime.extensions.skill_catalogue import SkillSet
    from seri.runtime.mcp.mcp_tools import McpTools
    from seri.runtime.session.profile import Profile
    from seri.runtime.trajectories.run_events import RunEvents

# The `task` tool's child agent: (the parent's host, description, prompt) -> its result.
SubagentRunner = Callable[["ToolHost", str, str], ToolRun]


@attrs.frozen
class ToolScope:
    """Where a session's tool calls run and for whom: values only."""

    project: Path
    session_id: str
    settings: Settings
    # The model's window as the parent learned it; a subagent works within it too.
    context_window: int
    redactor: Redactor
    # For a subagent's requests (the key never leaves the run's own records).
    api_key: str = attrs.field(repr=False)
    # The frozen prompt and glob rules of the parent's run: a subagent works under the
    # same project instructions (AGENTS.md, rules, memory) as its parent.
    startup: StartupFiles | None = None
    # What bash and the check command get (None: this process's environment).
    child_env: Mapping[str, str] | None = None
    # 0 for a session's own calls, 1 for a subagent's (which starts no other).
    depth: int = 0
    # A subagent's writes are checkpointed in its parent's session, under the parent's
    # user message that led to them, so the parent's /rewind puts them back too.
    checkpoint_session: str = ""


@attrs.define(kw_only=True, eq=False)
class ToolServices:
    """The live parts tool calls use, owned (and closed) by the session's run: the store
    (through the profile), the recorder, the OS sandbox, the MCP servers, the run's usage
    (a subagent keeps to the run's cost budget too) and what the `task` tool runs."""

    profile: Profile
    events: RunEvents
    sandbox: Sandbox | None = None
    mcp: McpTools | None = None
    spending: SpendingPort | None = None
    start_subagent: SubagentRunner | None = None
    # The session's skills, whose activate_skill calls run here (None: the session has none).
    skills: SkillSet | None = None
    # The session's hooks: a subagent's tool calls run them too (None: none configured).
    hooks: HookHost | None = None
    # An editor's buffers the file tools go through (an ACP client's fs methods; None: disk).
    files: FilePort | None = None


class ToolHost:
    def __init__(self, scope: ToolScope, policy: Policy, services: ToolServices) -> None:
        self.scope = scope
        self.services = services
        self.project = project_root(scope.project)
        self.profile = services.profile
        self.settings = scope.settings
        self.session_id = scope.session_id
        self.events = services.events
        self.redactor = redactor = scope.redactor
        # The rules in force (an "always" given during the task widens them).
        self.policy = policy
        self.api_key = scope.api_key
        self.context_window = scope.context_window
        self.startup = scope.startup
        self.depth = scope.depth
        self.checkpoint_session = scope.checkpoint_session or scope.session_id
        self.sandbox = sandbox = services.sandbox
        self.child_env = child_env = scope.child_env
        self.start_subagent = services.start_subagent
        self.mcp = services.mcp
        self.spending = services.spending
        self.skills = services.skills
        self.hooks = services.hooks
        profile = services.profile
        self.context = ToolContext(
            project=self.project,
            protected=default_protected(Path(os.path.realpath(profile.root))),
            spill_dir=profile.root / "spill",
            redact=redactor.text,
            read_denied=self._read_denied,
            sandbox=sandbox,
            env=child_env,
            files=services.files,
        )

    def _read_denied(self, rel: str) -> bool:
        """Whether a rule denies reading this file (read_file or grep): grep's walk skips it."""
        from seri.pure.permissions.permissions import (
            decide,  # the rules' matchers: at the first tool call
        )

        absolute = str(self.project / rel)
        for spec in SPECS:
            if spec.access != "read" or not spec.path_args:
                continue
            decision = decide(
                self.policy,
                spec.name,
                {spec.path_args[0]: rel},
                project_relative_path=rel,
                resolved_path=absolute,
            )
            if decision.action == "deny":
                return True
        return False

    def resolve(self, raw: str) -> ResolvedPath:
        from seri.io.tools.tools import spill_file

        spilled = spill_file(raw, self.context.spill_dir)
        if spilled is not None:
            # A spill file a cut result points at: readable (read_file only ever reads it).
            return ResolvedPath(None, str(spilled))
        try:
            path = confine(self.project, raw)
        except PathRefusedError as exc:
            where = f" (resolves to {exc.resolved})" if exc.resolved else ""
            return ResolvedPath(None, exc.resolved or None, f"{exc}{where}: outside the project")
        return ResolvedPath(relative_name(self.project, path), str(path))

    def current_text(self, raw: str) -> str | None:
        return current_text(self.project, raw, self.context.reads_through_port())

    @contextlib.contextmanager
    def one_call(self) -> Iterator[None]:
        """While one call runs, the editor is asked for each file once (``ReadOnce``): its
        diff, checkpoint, edit and read-back share one look. Not across a person's answer:
        the question comes before this, so a buffer edited meanwhile is what the call sees."""
        port = self.context.reads_through_port()
        if port is None:
            yield
            return
        whole = self.context
        self.context = attrs.evolve(whole, files=ReadOnce(port))
        try:
            yield
        finally:
            self.context = whole

    def spec(self, name: str) -> ToolSpec | None:
        """The record of the tool called ``name``: built in, or one of a running MCP server."""
        found = spec_of(name)
        if found is None and self.mcp is not None:
            found = find_spec(self.mcp.specs(), name)
        return found

    def run(
        self, call: ToolCall, arguments: Mapping[str, Any], max_chars: int | None = None
    ) -> ToolRun:
        if self.skills is not None and self.skills.runs(call.name):
            return self.skills.run(arguments)
        spec = self.spec(call.name)
        runner = spec.runner if spec is not None else ""
        if spec is None and self.mcp is not None and call.name.startswith(MCP_PREFIX):
            runner = "mcp"  # offered when the task began; its server is gone since
        try:
            match runner:
                case "subagent":
                    return self._subagent(arguments)
                case "memory":
                    return self._remember(arguments)
                case "tool_search":
                    found = self.mcp.specs() if self.mcp is not None else ()
                    return ToolRun(search_tools(found, str(arguments.get("query", ""))))
                case "mcp" if self.mcp is not None:
                    return self.mcp.run(call.name, arguments, max_chars, self.events)
                case "shell":
                    refused = self._protected_shell_write(call, arguments)
                    if refused:
                        return ToolRun(refused, is_error=True)
            checkpointed = spec is not None and spec.checkpointed and bool(spec.path_args)
            taken: _Taken | None = None
            if checkpointed:
                assert spec is not None
                kept = self._checkpoint(call.name, str(arguments.get(spec.path_args[0], "")))
                if isinstance(kept, str):
                    return ToolRun(kept, is_error=True)
                taken = kept
            from seri.io.tools.tools import run_tool

            context = attrs.evolve(self.context, max_output_chars=max_chars)
            result = run_tool(call.name, arguments, context)
        except KeyboardInterrupt:
            return ToolRun("", is_error=True, interrupted=True)
        touched = _touched(result)
        text = result.text
        if checkpointed:
            details = result.details_dict()
            self.events.record(Edit(tool=call.name, details=tuple(details.items())))
            self._after_write(result, taken, touched)
            if not result.is_error and self.settings.check_command:
                if isinstance(self.context.files, ReadOnce):
                    self.context.files.forget()  # the check may rewrite what seri wrote
                text += self._check()
        return ToolRun(text, result.is_error, False, touched)

    def _protected_shell_write(self, call: ToolCall, arguments: Mapping[str, Any]) -> str:
        """The second lock for the shell, as ``files.refuse_protected`` is for the file tools.

        The policy may have been decided without the project directory, and then a relative
        target inside a protected path (a profile directory inside the project, written as
        ``.seri/config.json``) looks harmless; judged from where the command runs, it is not.
        """
        from seri.pure.permissions.permissions import decide

        policy = attrs.evolve(self.policy, project=str(self.project))
        decision = decide(policy, "bash", arguments)
        if decision.action != "deny" or decision.rule != PROTECTED_RULE:
            return ""
        self.events.record(
            Denial(
                id=call.id,
                name=call.name,
                rule=PROTECTED_RULE,
                reason=decision.reason,
                by="policy",
            )
        )
        return f"denied by rule {PROTECTED_RULE}: {decision.reason}"

    # -- checkpoints and checks ----------------------------------------------------------------

    def _checkpoint(self, tool: str, raw: str) -> _Taken | str | None:
        """Keep the file's prior content before a write.

        Returns what was kept, None when there is nothing to keep (the tool will refuse
        the path), or why the write must not run: a file whose content cannot be read
        cannot be put back, so it is not overwritten either.
        """
        try:
            path = confine(self.project, raw)
        except PathRefusedError:
            return None  # the tool refuses it too; there is nothing to keep
        rel = relative_name(self.project, path)
        try:
            refuse_non_regular(path)  # a socket cannot even be opened to look at it
            prior = held_bytes(path, FILE_CAP_BYTES, self.context.reads_through_port())
        except IsADirectoryError:
            return None  # the tool says it is a directory; nothing is written
        except NotAFileError as exc:
            return (
                f"not run: {rel} is {exc.strerror}, so it was neither read nor written; "
                "seri writes only regular files"
            )
        except OSError as exc:
            if exc.errno == errno.EFBIG:
                return (
                    f"not run: {rel} is larger than the {FILE_CAP_BYTES // (1024 * 1024)} MiB "
                    "seri keeps as a checkpoint for /rewind; it was left as it is"
                )
            return (
                f"not run: {rel} cannot be read ({exc.strerror or exc}), so seri could not "
                "checkpoint it for /rewind; it was left as it is"
            )
        from seri.io.tools import checkpoints

        checkpoint_id = checkpoints.store_checkpoint(
            self.profile.store, self.checkpoint_session, str(self.project), rel, prior, time.time()
        )
        self.events.record(
            CheckpointEvent(
                tool=tool,
                path=rel,
                existed=prior is not None,
                bytes=len(prior) if prior is not None else 0,
                sha256=hashlib.sha256(prior).hexdigest() if prior is not None else None,
            )
        )
        return _Taken(checkpoint_id, prior, path)

    def _after_write(
        self, result: ToolOutcome, taken: _Taken | None, touched: tuple[str, ...]
    ) -> None:
        """Note what seri left in the file; forget a checkpoint of a write that changed nothing."""
        from seri.io.tools import checkpoints

        store, session = self.profile.store, self.checkpoint_session
        if result.is_error:
            unchanged = taken is not None and self._readable(taken.path) == taken.prior
            if taken is not None and taken.checkpoint_id is not None and unchanged:
                checkpoints.discard_checkpoint(store, taken.checkpoint_id)
            return
        if touched:
            written = self._readable(self.project / touched[0])
            if not isinstance(written, OSError):
                checkpoints.note_written(store, session, touched[0], written)

    def _readable(self, path: Path) -> bytes | OSError | None:
        try:
            return held_bytes(path, FILE_CAP_BYTES, self.context.reads_through_port())
        except OSError as exc:
            return exc

    def _check(self) -> str:
        from seri.runtime.tools.check_command import check_after_write

        return check_after_write(
            self.settings.check_command,
            project=self.project,
            sandbox=self.sandbox,
            env=self.child_env,
            redact=self.redactor.text,
            events=self.events,
        )

    # -- memory --------------------------------------------------------------------------------

    def _remember(self, arguments: Mapping[str, Any]) -> ToolRun:
        scope = str(arguments.get("scope", "project"))
        text = self.redactor.text(str(arguments.get("text", "")).strip())
        if not text:
            return ToolRun("nothing to remember: text is empty", is_error=True)
        number = memory_store.stage(
            self.profile.store, scope, str(self.project), text, self.session_id, time.time()
        )
        self.events.record(MemoryStaged(n=number, scope=scope, bytes=len(text)))
        return ToolRun(
            f"Staged as memory entry {number} ({scope}). Nothing is written until the user "
            f"approves it (/memory approve {number}); it then enters the prompt the next time "
            "seri starts, not in this session."
        )

    # -- subagents -----------------------------------------------------------------------------

    def _subagent(self, arguments: Mapping[str, Any]) -> ToolRun:
        if self.depth >= 1 or self.start_subagent is None:
            return ToolRun("a subagent cannot start another subagent", is_error=True)
        return self.start_subagent(self, str(arguments["description"]), str(arguments["prompt"]))


@attrs.frozen
class _Taken:
    """A checkpoint just taken: its id (None if the turn had one already), the prior bytes."""

    checkpoint_id: int | None
    prior: bytes | None
    path: Path


def _touched(result: ToolOutcome) -> tuple[str, ...]:
    path = result.detail("path")
    return (path,) if isinstance(path, str) and path else ()
