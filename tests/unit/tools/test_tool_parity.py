"""Tools as data: the records give every built-in tool the same outside behaviour as before
(the golden file was written by the code that kept eight separate tables), and no record
lacks a trait its consumers read."""

from __future__ import annotations

import json
from pathlib import Path

from seri.io.tools.tools import _RUNNERS
from seri.pure.tools.tool_specs import SPECS, TOOL_SEARCH, ToolSpec
from tests.tool_parity import snapshot

GOLDEN = Path(__file__).parents[2] / "golden" / "tools" / "parity.json"


def test_request_tools_permissions_and_recap_kinds_are_unchanged_for_every_builtin_tool() -> None:
    want = json.loads(GOLDEN.read_text())
    got = json.loads(json.dumps(snapshot()))
    assert got["request_tools"] == want["request_tools"]
    assert got["read_only"] == want["read_only"]
    assert got["recap"] == want["recap"]
    differing = {
        k: (got["decisions"][k], v)
        for k, v in want["decisions"].items()
        if got["decisions"][k] != v
    }
    assert differing == {}
    assert got["always"] == want["always"]


def problems(spec: ToolSpec) -> list[str]:
    """What a record lacks that a consumer reads."""
    found = []
    if not (spec.description and spec.name):
        found.append("no name or description")
    if spec.runner in ("files", "shell") and spec.name not in _RUNNERS:
        found.append("no runner in seri.io.tools.tools")
    params = {p.name for p in spec.params}
    named = (*spec.path_args, *([spec.subject] if spec.subject else []))
    found.extend(f"{arg} is not a parameter" for arg in named if arg not in params)
    if spec.checkpointed and not spec.path_args:
        found.append("checkpointed, yet names no path")
    if spec.default == "allow" and spec.access not in ("read", "meta"):
        found.append("changes things, yet is allowed by default")
    return found


def test_every_record_is_whole_and_its_runner_exists() -> None:
    assert {spec.name: problems(spec) for spec in (*SPECS, TOOL_SEARCH)} == {
        spec.name: [] for spec in (*SPECS, TOOL_SEARCH)
    }
    assert set(_RUNNERS) == {s.name for s in SPECS if s.runner in ("files", "shell")}


def test_a_record_missing_a_trait_is_caught() -> None:
    assert problems(ToolSpec("x", "d", (), runner="mcp", subject="path", checkpointed=True)) == [
        "path is not a parameter",
        "checkpointed, yet names no path",
    ]
    assert problems(ToolSpec("y", "d", (), access="write", default="allow")) == [
        "no runner in seri.io.tools.tools",
        "changes things, yet is allowed by default",
    ]
