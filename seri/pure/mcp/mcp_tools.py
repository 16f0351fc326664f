"""A server's tools as ``tools/list`` gives them, read defensively, and their HTTP parameters.

Each page of ``tools/list`` may carry a ``nextCursor``; the client follows it until it is
absent, repeats, or a page limit is reached (a server that loops must not hang seri). A tool
without a usable name or with an ``inputSchema`` that is not an object schema is left out with
a note, so one bad definition does not cost the server its other tools.

The annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``, ``openWorldHint``)
are kept: permission defaults are decided on them later. They are hints from the server, not
guarantees; an absent hint takes the spec's default (not read-only, destructive, not
idempotent, open world).

Over streamable HTTP at 2026-07-28 a tool may mark parameters with ``x-mcp-header``; their
values are then mirrored into ``Mcp-Param-<name>`` headers. A tool whose marks break the rules
(empty, not a header token, repeated, not a string/integer/boolean, or not reachable through
``properties`` alone) must be left out of the list: ``header_parameters`` says why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.inputs.json_text import dump_json
from seri.pure.mcp.mcp_protocol import encode_header_value

MAX_PAGES = 100
_HEADER_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_JS_SAFE_INTEGER = 2**53 - 1


@attrs.frozen
class HeaderParameter:
    """A tool parameter mirrored into the ``Mcp-Param-<header>`` header."""

    header: str
    path: tuple[str, ...]


@attrs.frozen
class McpTool:
    """One tool of one server. Schemas are kept as compact JSON text (records stay frozen)."""

    name: str
    description: str = ""
    title: str = ""
    input_schema: str = '{"type":"object"}'
    output_schema: str = ""
    read_only: bool = False
    destructive: bool = True
    idempotent: bool = False
    open_world: bool = True
    header_parameters: tuple[HeaderParameter, ...] = ()

    def parameters(self) -> dict[str, Any]:
        """The input schema as a provider takes it: an object schema without ``$schema``."""
        schema = dict(json_text.loads_stored(self.input_schema))
        schema.pop("$schema", None)
        schema.setdefault("type", "object")
        if schema.get("type") == "object":
            schema.setdefault("properties", {})
        return schema


@attrs.frozen
class ToolsPage:
    tools: tuple[McpTool, ...]
    next_cursor: str | None
    skipped: tuple[str, ...] = ()


def read_tools_page(result: Mapping[str, Any], *, over_http: bool = False) -> ToolsPage:
    """One ``tools/list`` result; ``skipped`` says which entries were left out and why."""
    raw_tools = result.get("tools")
    tools: list[McpTool] = []
    skipped: list[str] = []
    for raw in raw_tools if isinstance(raw_tools, list) else ():
        tool_or_reason = read_tool(raw, over_http=over_http)
        if isinstance(tool_or_reason, McpTool):
            tools.append(tool_or_reason)
        else:
            skipped.append(tool_or_reason)
    if not isinstance(raw_tools, list):
        skipped.append("the result has no list of tools")
    cursor = result.get("nextCursor")
    return ToolsPage(
        tuple(tools), cursor if isinstance(cursor, str) and cursor else None, tuple(skipped)
    )


def read_tool(raw: object, *, over_http: bool = False) -> McpTool | str:
    """A tool, or the reason it cannot be offered to the model."""
    if not isinstance(raw, Mapping):
        return "an entry that is not an object"
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        return "a tool without a name"
    schema = raw.get("inputSchema", {"type": "object"})
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return f"{name}: its inputSchema is not an object schema"
    headers: tuple[HeaderParameter, ...] = ()
    if over_http:
        found = header_parameters(schema)
        if isinstance(found, str):
            return f"{name}: {found}"
        headers = found
    output = raw.get("outputSchema")
    hints = raw.get("annotations")
    hints = hints if isinstance(hints, Mapping) else {}
    return McpTool(
        name=name,
        description=_text(raw.get("description")),
        title=_text(raw.get("title")) or _text(hints.get("title")),
        input_schema=dump_json(schema),
        output_schema=dump_json(output) if isinstance(output, Mapping) else "",
        read_only=_hint(hints, "readOnlyHint", default=False),
        destructive=_hint(hints, "destructiveHint", default=True),
        idempotent=_hint(hints, "idempotentHint", default=False),
        open_world=_hint(hints, "openWorldHint", default=True),
        header_parameters=headers,
    )


def header_parameters(schema: Mapping[str, Any]) -> tuple[HeaderParameter, ...] | str:
    """The ``x-mcp-header`` marks of an input schema, or why they make the tool unusable."""
    found: list[HeaderParameter] = []
    problems: list[str] = []
    _collect_marks(schema, (), found, problems, reachable=True)
    if problems:
        return problems[0]
    seen: set[str] = set()
    for parameter in found:
        folded = parameter.header.lower()
        if folded in seen:
            return f"x-mcp-header {parameter.header!r} is used twice"
        seen.add(folded)
    return tuple(found)


def _collect_marks(
    node: object,
    path: tuple[str, ...],
    found: list[HeaderParameter],
    problems: list[str],
    *,
    reachable: bool,
) -> None:
    if isinstance(node, list):
        for item in node:
            _collect_marks(item, path, found, problems, reachable=False)
        return
    if not isinstance(node, Mapping):
        return
    if "x-mcp-header" in node:
        problem = _mark_problem(node, reachable and bool(path))
        if problem:
            problems.append(problem)
        else:
            found.append(HeaderParameter(header=node["x-mcp-header"], path=path))
    for key, value in node.items():
        if key == "properties" and isinstance(value, Mapping):
            for name, child in value.items():
                _collect_marks(child, (*path, str(name)), found, problems, reachable=reachable)
        elif isinstance(value, Mapping | list):
            _collect_marks(value, path, found, problems, reachable=False)


def _mark_problem(node: Mapping[str, Any], reachable: bool) -> str:
    mark = node["x-mcp-header"]
    if not reachable:
        return "an x-mcp-header mark outside a chain of properties"
    if not isinstance(mark, str) or not _HEADER_TOKEN.match(mark):
        return f"x-mcp-header {mark!r} is not a header name"
    if node.get("type") not in _HEADER_TYPES:
        return f"x-mcp-header {mark!r} is on a parameter that is not a string, integer or boolean"
    return ""


def header_values(
    parameters: tuple[HeaderParameter, ...], arguments: Mapping[str, Any]
) -> tuple[tuple[str, str], ...]:
    """The ``Mcp-Param-*`` headers for one call's arguments (absent or null values: none)."""
    headers: list[tuple[str, str]] = []
    for parameter in parameters:
        value: Any = arguments
        for step in parameter.path:
            value = value.get(step) if isinstance(value, Mapping) else None
        text = _header_text(value)
        if text is not None:
            headers.append((f"Mcp-Param-{parameter.header}", encode_header_value(text)))
    return tuple(headers)


def _header_text(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) <= _JS_SAFE_INTEGER:
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= _JS_SAFE_INTEGER:
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


def _hint(hints: Mapping[str, Any], key: str, *, default: bool) -> bool:
    value = hints.get(key)
    return value if isinstance(value, bool) else default


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
