"""The tools the model may call: their JSON schemas and argument validation.

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
from typing import Any, Literal

import attrs

from seri.pure import json_text
from seri.pure.records import ToolCall

ParamType = Literal["string", "integer", "number", "boolean"]

# Tools that never change anything; a subagent or a read-only mode gets these.
READ_ONLY = ("read_file", "glob", "grep")

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
    name: str
    description: str
    params: tuple[Param, ...]


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
    ),
    ToolSpec(
        "write_file",
        "Create or overwrite a file in the project with the given content. "
        "Missing parent directories are created. Prefer `edit` for changing part of a file.",
        (
            Param("path", "string", "File path, relative to the project root.", non_empty=True),
            Param("content", "string", "The whole new content of the file."),
        ),
    ),
    ToolSpec(
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
    ),
    ToolSpec(
        "remember",
        "Save a short fact or preference for future sessions: scope `project` for this "
        "project only, `global` for every project.",
        (
            Param("text", "string", "What to remember, in one or two sentences.", non_empty=True),
            Param("scope", "string", "Where the memory applies.", enum=("project", "global")),
        ),
    ),
)

SPEC_BY_NAME: dict[str, ToolSpec] = {spec.name: spec for spec in SPECS}
TOOL_NAMES: tuple[str, ...] = tuple(SPEC_BY_NAME)


def to_openai(spec: ToolSpec) -> dict[str, Any]:
    """One tool in the OpenAI ``tools`` shape; a fresh dict each call."""
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
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": [p.name for p in spec.params if p.required],
                "additionalProperties": False,
            },
        },
    }


ALL_TOOLS: tuple[dict[str, Any], ...] = tuple(to_openai(spec) for spec in SPECS)


def select_tools(names: Iterable[str]) -> tuple[dict[str, Any], ...]:
    """The definitions of the named tools, in the given order.

    Raises ValueError for a name that is not a tool, since that is a bug in the
    caller, not something to hide from the model.
    """
    chosen: list[dict[str, Any]] = []
    for name in names:
        if name not in SPEC_BY_NAME:
            raise ValueError(f"unknown tool {name!r}; tools are {', '.join(TOOL_NAMES)}")
        chosen.append(to_openai(SPEC_BY_NAME[name]))
    return tuple(chosen)


def tool_definition_chars(names: Iterable[str]) -> int:
    """Characters of the named tools' definitions as a request carries them: they fill the
    context window like the history does, so the estimate counts them."""
    tools = select_tools(names)
    return len(json.dumps(tools, ensure_ascii=False, separators=(",", ":"))) if tools else 0


def parse_arguments(call: ToolCall) -> dict[str, Any] | str:
    """The call's arguments as a dict, or an error text to send back to the model.

    An optional parameter given as ``null`` counts as absent: models send that
    often and mean nothing by it. Defaults are not filled in here; the tool
    that runs applies them, so the recorded arguments stay as the model sent them.
    """
    spec = SPEC_BY_NAME.get(call.name)
    if spec is None:
        return f"Unknown tool {call.name!r}. Available tools: {', '.join(TOOL_NAMES)}."
    raw = call.arguments.strip() or "{}"
    try:
        value = json_text.loads(raw)
    except ValueError as exc:
        return f"Arguments for {call.name} are not valid JSON ({exc}). Send a JSON object."
    if not isinstance(value, dict):
        return f"Arguments for {call.name} must be a JSON object, not {_json_type_name(value)}."
    return _check_object(spec, value)


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
