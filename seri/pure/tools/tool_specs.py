"""The tools the model may call: one record per tool.

A ``ToolSpec`` is everything seri knows about a tool: its schema, what it does (``access``),
the argument permission patterns match (``subject``), the arguments that name project paths,
what a recap makes of it, whether a write is checkpointed, its default permission, how an
approval shows it, and which part of seri runs it. Every consumer (the request's tool list,
permissions, the loop, the recap, the tool host, /rewind, the activity line and the approval
prompt) reads these traits; none keeps a list of tool names of its own. An MCP tool is a
record too (``mcp_spec``), built when its server is up.

The schemas go out in every request in the OpenAI ``tools`` shape
(``seri.pure.tools.tool_definitions``). The same records drive ``parse_arguments``
(``seri.pure.tools.tool_arguments``), so what we promise the model and what we accept from it
cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from seri.pure.inputs import json_text

if TYPE_CHECKING:
    # Only its type: a chat without MCP servers never loads the MCP modules.
    from seri.pure.mcp.mcp_tools import McpTool

ParamType = Literal["string", "integer", "number", "boolean"]
# What a tool does: reads the project, writes it, runs something (a command, a server's
# tool), or works on seri itself (a subagent, memory, the tool catalogue).
Access = Literal["read", "write", "exec", "meta"]
# What a recap's Read:/Modified: lists make of a call's path ("": nothing).
RecapKind = Literal["read", "modified", ""]
# Which part of seri runs the tool (the tool host dispatches on it).
Runner = Literal["files", "shell", "subagent", "memory", "mcp", "tool_search", "skill"]
# How a person is shown a call to approve: a file's diff, the command, the subagent's task,
# the memory entry, or the arguments as JSON.
ShownAs = Literal["diff", "command", "task", "memory", "arguments"]
Default = Literal["allow", "ask"]

BASH_DEFAULT_TIMEOUT = 120
BASH_MAX_TIMEOUT = 600
# The largest file write_file or edit produces, edit reads, and a checkpoint keeps (every
# write is checkpointed in seri.db first, so this also bounds what one call adds to it).
FILE_CAP_BYTES = 10 * 1024 * 1024


@attrs.frozen
class Param:
    name: str
    type: ParamType
    description: str
    required: bool = True
    enum: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    non_empty: bool = False


@attrs.frozen
class ToolSpec:
    """One tool, whole. ``params`` describe a built-in tool's arguments; a tool whose schema
    comes from elsewhere (an MCP server) keeps it as JSON text in ``schema`` instead."""

    name: str
    description: str
    params: tuple[Param, ...] = ()
    access: Access = "exec"
    runner: Runner = "files"
    # The argument a rule's pattern matches (``read_file(src/**)``, ``bash(git *)``).
    subject: str = ""
    # Arguments naming a project path, resolved (symlinks followed) before rules judge them.
    path_args: tuple[str, ...] = ()
    recap: RecapKind = ""
    # Its prior content is kept before the call runs (and /rewind puts it back).
    checkpointed: bool = False
    default: Default = "ask"
    shown_as: ShownAs = "arguments"
    schema: str = ""
    # For an MCP tool: its server and its name there (the exposed name is ``name``).
    server: str = ""
    remote_name: str = ""

    @property
    def is_mcp(self) -> bool:
        return self.runner == "mcp"

    def one_line(self) -> str:
        """The description's first line, for a catalogue that defers full schemas: one line
        of at most ONE_LINE_CHARS, whatever the server wrote."""
        first = self.description.strip().splitlines()[0] if self.description.strip() else ""
        first = " ".join(first.split())
        return first if len(first) <= ONE_LINE_CHARS else first[: ONE_LINE_CHARS - 1] + "…"


def _file_writer(name: str, description: str, params: tuple[Param, ...]) -> ToolSpec:
    """A tool that writes the file its ``path`` names: checkpointed first, shown as a diff."""
    return ToolSpec(
        name,
        description,
        params,
        access="write",
        runner="files",
        subject="path",
        path_args=("path",),
        recap="modified",
        checkpointed=True,
        shown_as="diff",
    )


SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "read_file",
        "Read a text file in the project. Lines come back numbered, as `N<TAB>text`; "
        "the numbers are not part of the file. Long files are cut at 2000 lines: "
        "use offset and limit to page through them.",
        (
            Param("path", "string", "File path, relative to the project root.", non_empty=True),
            Param(
                "offset",
                "integer",
                "1-based line number to start at (default 1).",
                required=False,
                minimum=1,
            ),
            Param(
                "limit",
                "integer",
                "How many lines to read (default 2000).",
                required=False,
                minimum=1,
            ),
        ),
        access="read",
        runner="files",
        subject="path",
        path_args=("path",),
        recap="read",
        default="allow",
        shown_as="arguments",
    ),
    _file_writer(
        "write_file",
        "Create or overwrite a file in the project with the given content. "
        "Missing parent directories are created. Prefer `edit` for changing part of a file.",
        (
            Param("path", "string", "File path, relative to the project root.", non_empty=True),
            Param("content", "string", "The whole new content of the file."),
        ),
    ),
    _file_writer(
        "edit",
        "Replace exact text in a file. old_string must match the file exactly "
        "(whitespace included, without read_file's line numbers) and must occur once, "
        "unless replace_all is true.",
        (
            Param("path", "string", "File path, relative to the project root.", non_empty=True),
            Param("old_string", "string", "The exact text to replace.", non_empty=True),
            Param("new_string", "string", "The text to put in its place."),
            Param(
                "replace_all",
                "boolean",
                "Replace every occurrence (default false).",
                required=False,
            ),
        ),
    ),
    ToolSpec(
        "glob",
        "List files and directories in the project matching a glob pattern, sorted. "
        "`*` stays within one directory, `**` spans directories: `**/*.py` finds Python "
        "files at any depth. Directories end with `/`. `.git` is skipped.",
        (Param("pattern", "string", "Glob pattern relative to the project root.", non_empty=True),),
        access="read",
        runner="files",
        subject="pattern",
        default="allow",
    ),
    ToolSpec(
        "grep",
        "Search file contents with a Python regular expression, recursively. "
        "Prints `path:line:text` for each matching line; binary files and `.git` are skipped.",
        (
            Param("pattern", "string", "Python `re` regular expression.", non_empty=True),
            Param(
                "path",
                "string",
                "File or directory to search, relative to the project root (default: all).",
                required=False,
                non_empty=True,
            ),
        ),
        access="read",
        runner="files",
        subject="path",
        path_args=("path",),
        default="allow",
    ),
    ToolSpec(
        "bash",
        "Run a shell command with `bash -c` in the project directory, with no input. "
        "Output (stdout and stderr together) is cut to its head and tail when large; "
        "the exit code is reported.",
        (
            Param("command", "string", "The command to run.", non_empty=True),
            Param(
                "timeout",
                "number",
                f"Seconds before the command is killed (default {BASH_DEFAULT_TIMEOUT}, "
                f"at most {BASH_MAX_TIMEOUT}).",
                required=False,
                minimum=1,
                maximum=BASH_MAX_TIMEOUT,
            ),
        ),
        access="exec",
        runner="shell",
        subject="command",
        shown_as="command",
    ),
    ToolSpec(
        "task",
        "Hand a self-contained piece of work to a subagent with a fresh context. "
        "It sees only the prompt, so include everything it needs; its final answer "
        "comes back as this tool's result.",
        (
            Param("description", "string", "A few words naming the task.", non_empty=True),
            Param("prompt", "string", "Complete instructions for the subagent.", non_empty=True),
        ),
        access="meta",
        runner="subagent",
        shown_as="task",
    ),
    ToolSpec(
        "remember",
        "Save a short fact or preference for future sessions: scope `project` for this "
        "project only, `global` for every project.",
        (
            Param("text", "string", "What to remember, in one or two sentences.", non_empty=True),
            Param("scope", "string", "Where the memory applies.", enum=("project", "global")),
        ),
        access="meta",
        runner="memory",
        shown_as="memory",
    ),
)

SPEC_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in SPECS}
TOOL_NAMES: tuple[str, ...] = tuple(SPEC_BY_NAME)
# Tools that never change anything; a subagent or a read-only mode gets these.
READ_ONLY: tuple[str, ...] = tuple(spec.name for spec in SPECS if spec.access == "read")

# Tools whose prior file content is kept (and /rewind puts back).
CHECKPOINTED: frozenset[str] = frozenset(spec.name for spec in SPECS if spec.checkpointed)

# Offered only when MCP tools go out by name and one line (see ``deferred``): it returns the
# full definitions the model needs to call them.
TOOL_SEARCH = ToolSpec(
    "tool_search",
    "Some tools are listed by name and one line only, without their parameters. Before "
    "calling one, look up its full definition here: give its exact name (several names "
    "separated by spaces work too) or words from what it does.",
    (
        Param(
            "query",
            "string",
            "Tool names, or words describing what you need.",
            non_empty=True,
        ),
    ),
    access="meta",
    runner="tool_search",
    default="allow",
)
# Names a permission rule may give besides MCP tools: the built-in ones and the catalogue.
RULE_TOOL_NAMES: tuple[str, ...] = (*TOOL_NAMES, TOOL_SEARCH.name)
# A deferred tool's one line, at most.
ONE_LINE_CHARS = 120


def spec_of(name: str) -> ToolSpec | None:
    """The built-in tool called ``name`` (the catalogue included), or None."""
    return TOOL_SEARCH if name == TOOL_SEARCH.name else SPEC_BY_NAME.get(name)


def shown_as(name: str) -> ShownAs:
    """How a call to ``name`` is shown to a person (an MCP tool's: its arguments)."""
    spec = spec_of(name)
    return "arguments" if spec is None else spec.shown_as


def find_spec(tools: Iterable[ToolSpec], name: str) -> ToolSpec | None:
    """The tool among ``tools`` called ``name``, or None."""
    return next((spec for spec in tools if spec.name == name), None)


def mcp_spec(exposed: str, server: str, tool: McpTool) -> ToolSpec:
    """The record of one MCP tool: rules match it by name only, and a tool its server marks
    ``readOnlyHint`` is allowed by default like read_file (unless a rule says otherwise)."""
    return ToolSpec(
        exposed,
        tool.description or tool.title or f"{tool.name} (from MCP server {server})",
        access="read" if tool.read_only else "exec",
        runner="mcp",
        default="allow" if tool.read_only else "ask",
        shown_as="arguments",
        schema=json.dumps(tool.parameters(), ensure_ascii=False, separators=(",", ":")),
        server=server,
        remote_name=tool.name,
    )


def parameters_of(spec: ToolSpec) -> dict[str, Any]:
    """The JSON schema of a tool's arguments; a fresh dict each call."""
    if spec.schema:
        loaded = json_text.loads_stored(spec.schema)
        return loaded if isinstance(loaded, dict) else {"type": "object"}
    properties: dict[str, Any] = {}
    for param in spec.params:
        prop: dict[str, Any] = {"type": param.type, "description": param.description}
        if param.enum:
            prop["enum"] = list(param.enum)
        if param.minimum is not None:
            prop["minimum"] = param.minimum
        if param.maximum is not None:
            prop["maximum"] = param.maximum
        if param.non_empty:
            prop["minLength"] = 1
        properties[param.name] = prop
    return {
        "type": "object",
        "properties": properties,
        "required": [p.name for p in spec.params if p.required],
        "additionalProperties": False,
    }


def select_specs(names: Iterable[str]) -> tuple[ToolSpec, ...]:
    """The records of the named built-in tools, in the given order (ValueError for others)."""
    chosen: list[ToolSpec] = []
    for name in names:
        spec = spec_of(name)
        if spec is None:
            raise ValueError(f"unknown tool {name!r}; tools are {', '.join(TOOL_NAMES)}")
        chosen.append(spec)
    return tuple(chosen)
