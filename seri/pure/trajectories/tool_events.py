"""The events of tool calls and of what serves them.

A call the model asked for, what it gave back or why it was not allowed to run (and the
allow rules a person added by answering "always"), what a write did to a file (the checkpoint
kept before it, its edit, the project's check after it), the memory the model staged, the
subagents the `task` tool started, and the MCP servers that offer tools. The records are
part of ``events.EVENT_TYPES``, and follow its rules.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from seri.pure.trajectories.event_record import Absent, Event, field


@attrs.frozen(kw_only=True)
class ToolCallEvent(Event):
    """A tool call the model asked for."""

    type: ClassVar[str] = "tool_call"

    id: str = field("the call's id")
    name: str = field("the tool")
    arguments: str = field("the arguments text as the model sent it")


@attrs.frozen(kw_only=True)
class ToolResult(Event):
    """What a tool call gave the model (a call refused before it ran: `id`, `ok`, `error`)."""

    type: ClassVar[str] = "tool_result"

    id: str = field("the call's id")
    name: str | Absent = field("the tool", optional=True)
    ok: bool = field("false for an error")
    interrupted: bool | Absent = field("Ctrl-C stopped it", optional=True)
    bytes: int | Absent = field("of the whole result", optional=True)
    text: str | Absent = field(
        "what the model was given, cut to the window's share (elided when large)", optional=True
    )
    error: str | Absent = field("why it was refused before running", optional=True)


@attrs.frozen(kw_only=True)
class Denial(Event):
    """A tool call that was not allowed to run."""

    type: ClassVar[str] = "denial"

    id: str = field("the call's id")
    name: str = field("the tool", telemetry="plain")
    rule: str = field(
        "the deciding rule; `(protected)`, `(project)` for a path outside the project, "
        '`""` when a person said no',
        telemetry="plain",
    )
    reason: str = field(
        "why (`denied by user: …` carries what the person typed)", telemetry="content"
    )
    by: str | Absent = field("`policy` or `user`", optional=True, telemetry="plain")


@attrs.frozen(kw_only=True)
class SessionRuleEvent(Event):
    """A person answered "always": allow rules stored with the session (its later runs
    allow them too)."""

    type: ClassVar[str] = "session_rule"

    id: str = field("the call that was approved")
    rules: tuple[str, ...] = field("the allow rules added", telemetry="content")


@attrs.frozen(kw_only=True)
class CheckpointEvent(Event):
    """A file's content kept before a write (what /rewind puts back)."""

    type: ClassVar[str] = "checkpoint"

    tool: str = field("the writing tool", telemetry="plain")
    path: str = field("the file, relative to the project", telemetry="content")
    existed: bool = field("whether there was a file", telemetry="plain")
    bytes: int = field("its size", telemetry="plain")
    sha256: str | None = field("its hash (null for a new file)", telemetry="content")


@attrs.frozen(kw_only=True)
class Edit(Event):
    """What a write did to a file: the tool and its outcome's details."""

    type: ClassVar[str] = "edit"

    tool: str = field("`write_file` or `edit`", telemetry="plain")
    details: tuple[tuple[str, object], ...] = attrs.field(
        metadata={
            "doc": "`outcome` (`applied`, `not_found`, `ambiguous`, `unchanged`, …), `path`, "
            "`bytes`, `created`, `replacements`, `occurrences`",
            "export_name": "",
            "flatten": True,
            # Its keys as span event attributes: as they are, and as content.
            "telemetry": (
                ("outcome", "bytes", "created", "replacements", "occurrences"),
                ("path",),
            ),
        }
    )


@attrs.frozen(kw_only=True)
class Check(Event):
    """The project's check command, run after a successful write."""

    type: ClassVar[str] = "check"

    command: str = field("the command", telemetry="content")
    exit_code: int | None = field("its exit status", telemetry="plain")
    ok: bool = field("it passed", telemetry="plain")
    seconds: float = field("how long it ran", telemetry="plain")
    output: str = field("what it printed", telemetry="content")


@attrs.frozen(kw_only=True)
class MemoryStaged(Event):
    """The model asked to remember something (nothing is written until approved)."""

    type: ClassVar[str] = "memory_staged"

    n: int = field("the entry's number", telemetry="plain")
    scope: str = field("`project` or `global`", telemetry="plain")
    bytes: int = field("its size", telemetry="plain")


@attrs.frozen(kw_only=True)
class SubagentStart(Event):
    """The `task` tool started a subagent."""

    type: ClassVar[str] = "subagent_start"

    child: str = field("the subagent's session")
    description: str = field("the task's few words", telemetry="content")


@attrs.frozen(kw_only=True)
class SubagentEnd(Event):
    """A subagent ended."""

    type: ClassVar[str] = "subagent_end"

    child: str = field("the subagent's session")
    status: str = field("how its task ended, or `error`", telemetry="plain")
    turns: int | Absent = field("the turns it took", optional=True, telemetry="plain")


@attrs.frozen(kw_only=True)
class McpServer(Event):
    """An MCP server of the chat: up with its tools, not started, stopped and started again,
    gone, or offering other tools. What a person was told on stderr is `detail`."""

    type: ClassVar[str] = "mcp_server"

    server: str = field("the server's name in the configuration", telemetry="plain")
    state: str = field(
        "`ready` (started, at the first wait or later), `failed` (could not be started, or "
        "started again), `starting` (still starting when the first task went without it), "
        "`restarting` (it stopped; started again once), `restarted`, `gone` (stopped again "
        "after its restart: its tools are gone for the session) or `tools_changed`",
        telemetry="plain",
    )
    tools: int = field("the tools it offers now (0 once failed or gone)", telemetry="plain")
    detail: str | Absent = field(
        "why, in the words said on stderr", optional=True, telemetry="content"
    )
