"""The tools the model may call: one record per tool, and argument validation.

A ``ToolSpec`` is everything seri knows about a tool: its schema, what it does (``access``),
the argument permission patterns match (``subject``), the arguments that name project paths,
what a recap makes of it, whether a write is checkpointed, its default permission, how an
approval shows it, and which part of seri runs it. Every consumer (the request's tool list,
permissions, the loop, the recap, the tool host, /rewind, the activity line and the approval
prompt) reads these traits; none keeps a list of tool names of its own. An MCP tool is a
record too (``mcp_spec``), built when its server is up.

The schemas go out in every request in the OpenAI ``tools`` shape. The same
records drive ``parse_arguments``, so what we promise the model and what we
accept from it cannot drift apart. Validation is deliberately strict (unknown
parameters, wrong types, out-of-range numbers are errors) and every error is a
sentence the model can act on; nothing is executed for a call that fails it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

import attrs

from seri.pure import json_text
from seri.pure.records import ToolCall
from seri.pure.value_record import ValueRecord

if TYPE_CHECKING:
    # Only its type: a chat without MCP servers never loads the MCP modules.
    from seri.pure.mcp_tools import McpTool

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


@attrs.frozen(repr=False, eq=False)
class Param(ValueRecord):
    name: str
    type: ParamType
    description: str
    required: bool = True
    enum: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    non_empty: bool = False


@attrs.frozen(repr=False, eq=False)
class ToolSpec(ValueRecord):
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
TOOL_SEARCH_RESULTS = 5
# The most characters of tool definitions one MCP server adds to a request (about 10,000
# tokens): past it, its tools go by name and one line; past it again, only tool_search finds
# them. 30,000 tools with 2 KB descriptions put 10.9 MB into every request before.
SERVER_DEFINITION_CHARS = 40_000
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


def to_openai(spec: ToolSpec) -> dict[str, Any]:
    """One tool in the OpenAI ``tools`` shape; a fresh dict each call."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": parameters_of(spec),
        },
    }


def to_openai_brief(spec: ToolSpec) -> dict[str, Any]:
    """A deferred tool: its name and one line, and an open schema (``tool_search`` has the
    real one); the model can still call it, and its arguments are checked against the real
    schema when it does."""
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": f"{spec.one_line()} (parameters: call tool_search first)",
            "parameters": {"type": "object"},
        },
    }


ALL_TOOLS: tuple[dict[str, Any], ...] = tuple(to_openai(spec) for spec in SPECS)


def select_tools(names: Iterable[str]) -> tuple[dict[str, Any], ...]:
    """The definitions of the named built-in tools, in the given order.

    Raises ValueError for a name that is not a tool, since that is a bug in the
    caller, not something to hide from the model.
    """
    return definitions(select_specs(names))


def select_specs(names: Iterable[str]) -> tuple[ToolSpec, ...]:
    """The records of the named built-in tools, in the given order (ValueError for others)."""
    chosen: list[ToolSpec] = []
    for name in names:
        spec = spec_of(name)
        if spec is None:
            raise ValueError(f"unknown tool {name!r}; tools are {', '.join(TOOL_NAMES)}")
        chosen.append(spec)
    return tuple(chosen)


def definitions(tools: Iterable[ToolSpec], deferred: bool = False) -> tuple[dict[str, Any], ...]:
    """The request's ``tools``: every tool whole, or, when ``deferred``, MCP tools by name and
    one line (the built-in ones and ``tool_search`` stay whole). Each MCP server adds at most
    ``SERVER_DEFINITION_CHARS`` of them; past that its tools are left out of the list, and
    ``tool_search`` (whose description then says how many, of which server) finds them."""
    specs = tuple(tools)
    left_out = unlisted_tools(specs) if deferred else {}
    skipped = {name for names in left_out.values() for name in names}
    sent: list[dict[str, Any]] = []
    for spec in specs:
        if spec.name in skipped:
            continue
        if deferred and spec.is_mcp:
            sent.append(to_openai_brief(spec))
        elif spec.name == TOOL_SEARCH.name and left_out:
            sent.append(_tool_search_noting(spec, left_out))
        else:
            sent.append(to_openai(spec))
    return tuple(sent)


def _whole_chars(spec: ToolSpec) -> int:
    # About what to_openai(spec) takes as JSON, without serialising 30,000 tools to know.
    return len(spec.name) + len(spec.description) + len(spec.schema or "{}") + 70


def _brief_chars(spec: ToolSpec) -> int:
    return len(spec.name) + len(spec.one_line()) + 110


def servers_over_budget(tools: Iterable[ToolSpec]) -> dict[str, int]:
    """The MCP servers whose tools, whole, would add more than SERVER_DEFINITION_CHARS to a
    request, with about how many characters they would add."""
    sizes: dict[str, int] = {}
    for spec in tools:
        if spec.is_mcp:
            sizes[spec.server] = sizes.get(spec.server, 0) + _whole_chars(spec)
    return {server: size for server, size in sizes.items() if size > SERVER_DEFINITION_CHARS}


def definition_chars_by_server(tools: Iterable[ToolSpec]) -> tuple[tuple[str, int], ...]:
    """About how many characters of definitions each MCP server adds to a request (never
    more than its budget and tool_search's note), largest first."""
    sizes: dict[str, int] = {}
    for spec in tools:
        if spec.is_mcp:
            sizes[spec.server] = sizes.get(spec.server, 0) + _whole_chars(spec)
    capped = ((name, min(size, SERVER_DEFINITION_CHARS)) for name, size in sizes.items())
    return tuple(sorted(capped, key=lambda pair: (-pair[1], pair[0])))


def unlisted_tools(tools: Iterable[ToolSpec]) -> dict[str, tuple[str, ...]]:
    """Per MCP server, the tools left out of a deferred list: those past its budget of
    SERVER_DEFINITION_CHARS of one-line entries (in the order the server gave them)."""
    used: dict[str, int] = {}
    left_out: dict[str, list[str]] = {}
    for spec in tools:
        if not spec.is_mcp:
            continue
        if used.get(spec.server, 0) <= SERVER_DEFINITION_CHARS:  # else: no need to measure
            used[spec.server] = used.get(spec.server, 0) + _brief_chars(spec)
        if used[spec.server] > SERVER_DEFINITION_CHARS:
            left_out.setdefault(spec.server, []).append(spec.name)
    return {server: tuple(names) for server, names in left_out.items()}


def _tool_search_noting(spec: ToolSpec, left_out: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    counts = "; ".join(
        f"{len(names):,} of MCP server {server!r}" for server, names in left_out.items()
    )
    definition = to_openai(spec)
    definition["function"]["description"] = (
        f"{spec.description} Not listed at all, to keep the request small (find them here "
        f"by words, then call them by name): {counts}."
    )
    return definition


def tool_definition_chars(tools: Iterable[ToolSpec | str], deferred: bool = False) -> int:
    """Characters of the tools' definitions as a request carries them: they fill the
    context window like the history does, so the estimate counts them."""
    specs = tuple(spec if isinstance(spec, ToolSpec) else _known(spec) for spec in tools)
    sent = definitions(specs, deferred)
    return len(json.dumps(sent, ensure_ascii=False, separators=(",", ":"))) if sent else 0


def _known(name: str) -> ToolSpec:
    return select_specs((name,))[0]


def should_defer(tools: Iterable[ToolSpec], threshold: int) -> bool:
    """Whether MCP tools go out by name only: when there are more than ``threshold`` of them
    (a negative threshold never defers by count), or when one server's tools, whole, would
    add more than SERVER_DEFINITION_CHARS to the request (whatever the threshold)."""
    specs = tuple(tools)
    count = sum(1 for spec in specs if spec.is_mcp)
    by_count = threshold >= 0 and count > threshold and count > 0
    return by_count or bool(servers_over_budget(specs))


def search_tools(tools: Iterable[ToolSpec], query: str) -> str:
    """``tool_search``'s answer: the full definitions of the tools ``query`` names, or else of
    those whose name and description share the most words with it (at most five)."""
    candidates = [spec for spec in tools if spec.is_mcp]
    words = [w for w in re.split(r"[\s,]+", query.strip()) if w]
    named = [spec for spec in candidates if spec.name in words]
    if not named:
        lowered = [w.lower() for w in words]
        scored = []
        for index, spec in enumerate(candidates):
            haystack = f"{spec.name} {spec.remote_name} {spec.description}".lower()
            score = sum(1 for w in lowered if w in haystack)
            if score:
                scored.append((-score, index, spec))
        named = [spec for _, _, spec in sorted(scored)[:TOOL_SEARCH_RESULTS]]
    if not named:
        listed = ", ".join(spec.name for spec in candidates) or "none"
        return f"No tool matches {query!r}. Tools listed by name only: {listed}."
    found = [to_openai(spec)["function"] for spec in named[:TOOL_SEARCH_RESULTS]]
    return json.dumps(found, ensure_ascii=False, indent=1)


def parse_arguments(call: ToolCall, spec: ToolSpec | None = None) -> dict[str, Any] | str:
    """The call's arguments as a dict, or an error text to send back to the model.

    ``spec`` is the tool's record (the built-in one of that name when not given). An
    optional parameter given as ``null`` counts as absent: models send that
    often and mean nothing by it. Defaults are not filled in here; the tool
    that runs applies them, so the recorded arguments stay as the model sent them.
    """
    spec = spec_of(call.name) if spec is None else spec
    if spec is None:
        return f"Unknown tool {call.name!r}. Available tools: {', '.join(TOOL_NAMES)}."
    raw = call.arguments.strip() or "{}"
    try:
        value = json_text.loads(raw)
    except ValueError as exc:
        return f"Arguments for {call.name} are not valid JSON ({exc}). Send a JSON object."
    if not isinstance(value, dict):
        return f"Arguments for {call.name} must be a JSON object, not {_json_type_name(value)}."
    if spec.schema:
        return _check_against_schema(spec, value)
    return _check_object(spec, value)


def _check_against_schema(spec: ToolSpec, value: dict[str, Any]) -> dict[str, Any] | str:
    """The top level of a server's schema: required names present, no unknown names when it
    forbids them, and the JSON type of each named argument. The server checks the rest."""
    schema = parameters_of(spec)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    missing = [name for name in required if name not in value]
    if missing:
        return f"{spec.name} is missing required parameter(s): {', '.join(missing)}."
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            return (
                f"{spec.name} got unknown parameter(s) {', '.join(unknown)}; "
                f"its parameters are {', '.join(properties) or 'none'}."
            )
    for name, arg in value.items():
        declared = properties.get(name)
        expected = declared.get("type") if isinstance(declared, dict) else None
        if isinstance(expected, str) and not _json_type_matches(expected, arg):
            return (
                f"{spec.name}: parameter {name!r} must be {_article(expected)}, "
                f"got {_json_type_name(arg)}."
            )
    return value


def _json_type_matches(expected: str, value: object) -> bool:
    if expected in ("string", "boolean", "integer", "number"):
        return _has_type(expected, value)  # type: ignore[arg-type]  # one of ParamType
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "null":
        return value is None
    return True


def _check_object(spec: ToolSpec, value: dict[str, Any]) -> dict[str, Any] | str:
    known = {p.name: p for p in spec.params}
    unknown = sorted(set(value) - set(known))
    if unknown:
        return (
            f"{spec.name} got unknown parameter(s) {', '.join(unknown)}; "
            f"its parameters are {', '.join(known)}."
        )
    args = {k: v for k, v in value.items() if not (v is None and not known[k].required)}
    missing = [p.name for p in spec.params if p.required and p.name not in args]
    if missing:
        return f"{spec.name} is missing required parameter(s): {', '.join(missing)}."
    for name, arg in args.items():
        problem = _check_value(known[name], arg)
        if problem:
            return f"{spec.name}: parameter {name!r} {problem}."
    return args


def _check_value(param: Param, value: object) -> str:
    """What is wrong with one argument, or "" if nothing is."""
    if not _has_type(param.type, value):
        return f"must be {_article(param.type)}, got {_json_type_name(value)}"
    if param.enum and value not in param.enum:
        return f"must be one of {', '.join(param.enum)}, got {value!r}"
    if param.non_empty and isinstance(value, str) and not value.strip():
        return "must not be empty"
    if isinstance(value, str) and _LONE_SURROGATE.search(value):
        found = _LONE_SURROGATE.search(value)
        assert found is not None
        return (
            f"must be valid Unicode text, but it holds a lone surrogate "
            f"(\\u{ord(found.group()):04x}) at character {found.start()}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if param.minimum is not None and value < param.minimum:
            return f"must be at least {param.minimum:g}, got {value}"
        if param.maximum is not None and value > param.maximum:
            return f"must be at most {param.maximum:g}, got {value}"
    return ""


# JSON decodes a proper pair (\ud83d\ude00) into one character: what is left is a half.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_type(expected: ParamType, value: object) -> bool:
    # bool is a subclass of int in Python, but JSON keeps them apart.
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if expected == "integer":
        return isinstance(value, int)
    return isinstance(value, int | float)


def _json_type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _article(type_name: str) -> str:
    return f"an {type_name}" if type_name[0] in "aeiou" else f"a {type_name}"
