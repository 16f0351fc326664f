"""Hooks: commands the person (or an approved project) runs at points of a session, written
the way Claude Code's are, so that a hook written for Claude Code runs unchanged.

The configuration is Claude Code's: ``{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type":
"command", "command": C, "timeout": S}]}]}}``, in seri's ``config.json`` (the person's) and in
a project's ``.seri/hooks.json`` or ``.claude/settings.json`` (the project's: run only once
approved, ``seri.pure.permissions.trust``). A matcher is a regular expression matched whole against
the tool's name (``Bash|Write``, ``mcp__.*``, ``*`` or none for every tool); seri's tools answer to
Claude Code's names as well as their own (``Bash`` is ``bash``, ``Read`` is ``read_file`` ...).
The JSON a hook reads on stdin is Claude Code's too (``hook_input``), with ``tool_input``
carrying the fields those hooks read (``command``, ``file_path``, ``content`` ...).

What a hook's exit status and output mean is ``seri.pure.extensions.hook_decisions``; running one is
``seri.io.extensions.hook_runner``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.extensions.hook_events import EVENTS, PERSON_SOURCE

# Claude Code's default time limit for a command hook, in seconds.
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0

# Claude Code's names of seri's tools (a matcher may use either).
CLAUDE_TOOL_NAMES: Mapping[str, str] = {
    "bash": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit": "Edit",
    "grep": "Grep",
    "glob": "Glob",
    "task": "Task",
}
# The argument Claude Code's file tools call ``file_path``.
_PATH_ARGUMENT = "path"


@attrs.frozen
class HookCommand:
    """One configured command: its event, matcher, where it is configured, and the entry as
    written (what a project's approval covers, by its digest)."""

    event: str
    matcher: str
    command: str
    timeout: float
    source: str
    # Its place in its file, for a person to find it: "PreToolUse #2".
    name: str
    # Run in seri's OS sandbox (the person's config.json alone can say false).
    sandbox: bool = True
    entry: Mapping[str, Any] = attrs.field(factory=dict)

    @property
    def is_project(self) -> bool:
        return self.source != PERSON_SOURCE

    @property
    def digest(self) -> str:
        from seri.pure.permissions.trust import entry_digest  # a project's hooks only

        return entry_digest({"source": self.source, "event": self.event, **self.entry})


def parse_hooks(document: Any, source: str) -> tuple[tuple[HookCommand, ...], tuple[str, ...]]:
    """The commands a ``hooks`` object configures, and a line for each part that cannot be
    used (the rest still runs)."""
    if document is None:
        return (), ()
    if not isinstance(document, Mapping):
        return (), (f"{source}: 'hooks' must be an object of events, not {_kind(document)}",)
    found: list[HookCommand] = []
    problems: list[str] = []
    for event, groups in document.items():
        if event not in EVENTS:
            problems.append(
                f"{source}: hook event {event!r} is not one seri runs ({', '.join(EVENTS)})"
            )
            continue
        if not isinstance(groups, list):
            problems.append(f"{source}: hooks.{event} must be a list of matcher groups")
            continue
        for group in groups:
            commands, wrong = _group(event, group, source, sum(h.event == event for h in found))
            found.extend(commands)
            problems.extend(wrong)
    return tuple(found), tuple(problems)


def _group(event: str, group: Any, source: str, before: int) -> tuple[list[HookCommand], list[str]]:
    where = f"{source}: hooks.{event}"
    if not isinstance(group, Mapping) or not isinstance(group.get("hooks"), list):
        return [], [f"{where}: each entry needs a 'hooks' list of commands"]
    matcher = group.get("matcher", "")
    if not isinstance(matcher, str) or not _compiles(matcher):
        return [], [f"{where}: matcher {matcher!r} is not a regular expression"]
    found: list[HookCommand] = []
    problems: list[str] = []
    for hook in group["hooks"]:
        if not isinstance(hook, Mapping) or hook.get("type", "command") != "command":
            problems.append(f"{where}: only hooks of type 'command' run in seri: {hook!r}")
            continue
        command = hook.get("command")
        timeout = hook.get("timeout", DEFAULT_TIMEOUT)
        if not isinstance(command, str) or not command.strip():
            problems.append(f"{where}: a hook needs a 'command'")
            continue
        if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
            problems.append(f"{where}: 'timeout' must be a number of seconds: {timeout!r}")
            continue
        sandbox = hook.get("sandbox", True)
        if sandbox is not True and source != PERSON_SOURCE:
            problems.append(f"{where}: a project's hook always runs in the sandbox")
        entry = {"matcher": matcher, **dict(hook)}
        found.append(
            HookCommand(
                event=event,
                matcher=matcher,
                command=command,
                timeout=min(float(timeout), MAX_TIMEOUT),
                source=source,
                name=f"{event} #{before + len(found) + 1}",
                sandbox=sandbox is not False if source == PERSON_SOURCE else True,
                entry=entry,
            )
        )
    return found, problems


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except re.error:
        return pattern == "*"
    return True


def _kind(value: Any) -> str:
    return type(value).__name__


def claude_tool_name(name: str) -> str:
    """The name a Claude Code hook knows the tool by (an MCP tool's is the same)."""
    return CLAUDE_TOOL_NAMES.get(name, name)


def matches(hook: HookCommand, subject: str) -> bool:
    """Whether the hook runs for ``subject`` (a tool's name; for other events what the
    matcher is about: a SessionStart's source, a PreCompact's trigger); empty and ``*``
    match everything, as in Claude Code."""
    if hook.matcher in ("", "*") or not subject:
        return True
    names = {subject, claude_tool_name(subject)}
    try:
        pattern = re.compile(hook.matcher)
    except re.error:
        return False
    return any(pattern.fullmatch(name) for name in names)


def tool_input(name: str, arguments: Mapping[str, Any], project: str) -> dict[str, Any]:
    """A call's arguments as a Claude Code hook reads them: seri's own, and under Claude
    Code's names (``file_path`` absolute) for the tools it has too."""
    shown = dict(arguments)
    path = arguments.get(_PATH_ARGUMENT)
    if name in ("read_file", "write_file", "edit") and isinstance(path, str):
        shown["file_path"] = path if path.startswith("/") else f"{project.rstrip('/')}/{path}"
    if name == "edit" and "replace_all" not in shown:
        shown["replace_all"] = False
    return shown


def hook_input(event: str, common: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON on a hook's stdin: the session's common fields, the event's name, its own."""
    return {**common, "hook_event_name": event, **fields}


def configured_events(hooks: tuple[HookCommand, ...]) -> frozenset[str]:
    return frozenset(hook.event for hook in hooks)
