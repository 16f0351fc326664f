"""The request's ``tools``: each tool's record (``seri.pure.tools.tool_specs``) in the OpenAI shape,
whole or, when MCP tools are deferred, by name and one line, within each MCP server's budget of
characters; and ``tool_search``, which gives a deferred tool's whole definition.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from seri.pure.tools.tool_specs import SPECS, TOOL_SEARCH, ToolSpec, parameters_of, select_specs

TOOL_SEARCH_RESULTS = 5
# The most characters of tool definitions one MCP server adds to a request (about 10,000
# tokens): past it, its tools go by name and one line; past it again, only tool_search finds
# them. 30,000 tools with 2 KB descriptions put 10.9 MB into every request before.
SERVER_DEFINITION_CHARS = 40_000


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


def _whole_chars_by_server(tools: Iterable[ToolSpec]) -> dict[str, int]:
    """About how many characters each MCP server's tools, whole, would add to a request."""
    sizes: dict[str, int] = {}
    for spec in tools:
        if spec.is_mcp:
            sizes[spec.server] = sizes.get(spec.server, 0) + _whole_chars(spec)
    return sizes


def servers_over_budget(tools: Iterable[ToolSpec]) -> dict[str, int]:
    """The MCP servers whose tools, whole, would add more than SERVER_DEFINITION_CHARS to a
    request, with about how many characters they would add."""
    sizes = _whole_chars_by_server(tools)
    return {server: size for server, size in sizes.items() if size > SERVER_DEFINITION_CHARS}


def definition_chars_by_server(tools: Iterable[ToolSpec]) -> tuple[tuple[str, int], ...]:
    """About how many characters of definitions each MCP server adds to a request (never
    more than its budget and tool_search's note), largest first."""
    sizes = _whole_chars_by_server(tools)
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
