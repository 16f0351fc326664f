"""The Read: and Modified: lists of a recap, taken from the evicted tool calls themselves.

The summarizer never supplies paths: a model asked to list files may drop or invent some, while
the calls record exactly what was touched. ``read_file`` makes a path read; ``write_file`` and
``edit`` make it modified; a path that was both is listed as modified only.

Paths are kept relative to the session's project where they lie inside it (models often send
absolute paths; one real recap held 150 of them), and each list is in order of the most recent
touch, oldest first, so that the recap can show the most recent ones first and only so many
(``shown_paths``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from seri.pure.inputs import json_text
from seri.pure.session.records import Message, ToolCall
from seri.pure.tools.tool_specs import SPECS

# From the tools' records (an MCP tool names no project file: it is in neither list).
READING_TOOLS: frozenset[str] = frozenset(spec.name for spec in SPECS if spec.recap == "read")
MODIFYING_TOOLS: frozenset[str] = frozenset(spec.name for spec in SPECS if spec.recap == "modified")

# The argument that names the file. "path" is seri's own; the others are what models trained on
# other agents' tools sometimes send, and a path is worth recording whatever it was called.
_PATH_KEYS = ("path", "file_path", "filePath")


# The most paths a recap shows per list; the rest are counted ("and 12 more").
PATHS_SHOWN = 40


class TouchedPaths(NamedTuple):
    """Paths read and paths modified, each by most recent touch (oldest first), never
    overlapping."""

    read: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()


def call_path(call: ToolCall) -> str | None:
    """The file a tool call names, or None when its arguments name none (or are not JSON)."""
    return arguments_path(call.arguments)


def arguments_path(text: str) -> str | None:
    """The file a tool call's arguments (JSON text) name, or None."""
    try:
        arguments = json_text.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(arguments, dict):
        return None
    for key in _PATH_KEYS:
        value = arguments.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def project_relative(path: str, project: str) -> str:
    """``path`` relative to ``project`` when it lies inside it, else as it is."""
    path = path.removeprefix("./") if path != "./" else path
    root = project.rstrip("/")
    if root and path.startswith(root + "/") and len(path) > len(root) + 1:
        return path[len(root) + 1 :]
    return path


def paths_touched(evicted: Sequence[Message], project: str = "") -> TouchedPaths:
    """Read and modified paths from the tool calls among ``evicted``, relative to ``project``.

    A call whose result (also among ``evicted``) is an error is skipped: a read that failed
    read nothing, and an edit that failed changed nothing. A call with no result in sight is
    counted, since it may well have run.
    """
    read: list[str] = []
    modified: list[str] = []
    for i, m in enumerate(evicted):
        if not m.tool_calls:
            continue
        failed = {r.tool_call_id for r in _results_after(evicted, i) if r.is_error}
        for call in m.tool_calls:
            path = None if call.id in failed else call_path(call)
            if path is None:
                continue
            path = project_relative(path, project)
            if call.name in READING_TOOLS:
                read.append(path)
            elif call.name in MODIFYING_TOOLS:
                modified.append(path)
    return _normalized(read, modified)


def _results_after(messages: Sequence[Message], i: int) -> Iterable[Message]:
    # The results of an assistant message's calls are the tool messages right after it. Looking
    # only there, not at every result by id, keeps a provider that reuses call ids from mixing
    # up one turn's failures with another's.
    for j in range(i + 1, len(messages)):
        if messages[j].role != "tool":
            return
        yield messages[j]


def merge_paths(old: TouchedPaths, new: TouchedPaths) -> TouchedPaths:
    """The union of two path lists; modified wins over read.

    Order is the most recent touch, old before new (a path touched again moves to the end),
    so merging is idempotent (``merge(merge(a, b), b) == merge(a, b)``) and associative.
    """
    return _normalized([*old.read, *new.read], [*old.modified, *new.modified])


def shown_paths(paths: Sequence[str], limit: int = PATHS_SHOWN) -> tuple[tuple[str, ...], int]:
    """The ``limit`` most recently touched of ``paths``, most recent first, and how many more."""
    recent = tuple(reversed(paths[-limit:])) if limit > 0 else ()
    return recent, len(paths) - len(recent)


def _normalized(read: Iterable[str], modified: Iterable[str]) -> TouchedPaths:
    modified_once = _unique_last(modified)
    written = set(modified_once)
    return TouchedPaths(
        read=tuple(p for p in _unique_last(read) if p not in written), modified=modified_once
    )


def _unique_last(paths: Iterable[str]) -> tuple[str, ...]:
    """Each path once, at the place of its last occurrence."""
    last: dict[str, None] = {}
    for path in paths:
        last.pop(path, None)
        last[path] = None
    return tuple(last)
