"""Event types are named in one place: the event record modules
(``seri/pure/trajectories/events.py`` with ``tool_events.py`` and ``history_events.py``, whose
records ``events.EVENT_TYPES`` lists).

Read statically from the source: a string equal to an event type, where code dispatches on
it (compared, a ``case``, a dict key, a member of a set), is a second definition of that
type that a rename would silently leave behind. Code says ``ModelCall.type`` instead.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import attrs

from seri.pure.trajectories import events
from seri.pure.trajectories.genai_attributes import EVENT_FIELDS

ROOT = Path(__file__).resolve().parent.parent
# The modules that define the records, and only records: a type's literal is its record's.
EVENT_MODULES = frozenset(
    ROOT / "seri" / "pure" / "trajectories" / name
    for name in ("events.py", "tool_events.py", "history_events.py")
)
TYPE_NAMES = frozenset(kind.type for kind in events.EVENT_TYPES)
# The same words with another meaning, where they are not an event's type.
OTHER_MEANINGS = {
    ("seri/io/tools/tools.py", "edit"): "the edit tool's name",
    ("seri/pure/extensions/hooks.py", "edit"): "the edit tool's name (Claude Code's Edit)",
    ("seri/pure/acp/acp_updates.py", "edit"): "the edit tool's name, and ACP's tool kind",
    ("seri/pure/agent/tool_call_answers.py", "edit"): "the edit tool's name",
    ("seri/pure/compaction/carried_rules.py", "rule"): "a message's kind (a rule's text)",
    ("seri/pure/agent/rules.py", "rule"): "a message's kind",
    ("seri/pure/session/session_markdown.py", "rule"): "a message's kind",
    ("seri/pure/terminal/terminal_style.py", "rule"): "a message's kind",
    ("seri/pure/inputs/config_keys.py", "context_window"): "a config.json key",
    ("seri/pure/inputs/config_keys.py", "compaction"): "a config.json key",
    ("seri/pure/inputs/config_keys.py", "check"): "a config.json key",
    ("seri/runtime/compaction/compact_plan.py", "context_window"): "a key of the plan's JSON",
    ("seri/runtime/compaction/compact_plan.py", "shrink"): "a key of the plan's JSON",
    ("seri/pure/trajectories/genai_trace.py", "overflow"): "a turn's status",
}


def _strings(node: ast.AST) -> Iterator[ast.Constant]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for item in node.elts:
            yield from _strings(item)
    elif isinstance(node, ast.BinOp):
        yield from _strings(node.left)
        yield from _strings(node.right)
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("frozenset", "set", "tuple")
        and node.args
    ):
        yield from _strings(node.args[0])


def dispatch_literals(source: str) -> list[tuple[int, str]]:
    """The event-type strings code dispatches on: (line, type)."""
    found: list[ast.Constant] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                found.extend(_strings(side))
        elif isinstance(node, ast.MatchValue):
            found.extend(_strings(node.value))
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if key is not None:
                    found.extend(_strings(key))
        elif isinstance(node, ast.Set) or (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("frozenset", "set")
        ):
            found.extend(_strings(node))
    return sorted({(c.lineno, str(c.value)) for c in found if c.value in TYPE_NAMES})


def test_the_event_modules_are_where_the_records_are() -> None:
    homes = {Path(sys.modules[kind.__module__].__file__ or "") for kind in events.EVENT_TYPES}
    assert homes == EVENT_MODULES


def test_no_event_type_literal_outside_the_event_modules() -> None:
    stray = []
    for path in sorted((ROOT / "seri").rglob("*.py")):
        if path in EVENT_MODULES:
            continue
        where = path.relative_to(ROOT).as_posix()
        for line, name in dispatch_literals(path.read_text()):
            if (where, name) not in OTHER_MEANINGS:
                stray.append(f"{where}:{line}: {name!r} (say {_class_of(name)}.type)")
    assert not stray, "\n".join(stray)


def _class_of(name: str) -> str:
    return next(kind.__name__ for kind in events.EVENT_TYPES if kind.type == name)


def test_the_check_finds_each_form_of_dispatch() -> None:
    source = """
if record.type == "model_call": pass
if kind in ("tool_result", "denial"): pass
match kind:
    case "compaction": pass
HANDLERS = {"turn_end": print}
INSIDE = frozenset({"edit"}) | {"check"}
words = "model_call is a word here"
"""
    assert dispatch_literals(source) == [
        (2, "model_call"),
        (3, "denial"),
        (3, "tool_result"),
        (5, "compaction"),
        (6, "turn_end"),
        (7, "check"),
        (7, "edit"),
    ]


def test_each_event_type_is_one_record() -> None:
    """No two records share a type, and no class outside the event modules claims one."""
    named = [kind.type for kind in events.EVENT_TYPES]
    assert len(named) == len(set(named))
    for path in sorted((ROOT / "seri").rglob("*.py")):
        if path in EVENT_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                value = node.value
                if node.target.id == "type" and isinstance(value, ast.Constant):
                    assert value.value not in TYPE_NAMES, f"{path}:{node.lineno}"


def test_span_event_fields_are_the_records_own() -> None:
    """What an OpenTelemetry span event carries is marked on the record's fields: every name
    there is one the record exports (a flattened field's keys are named in its doc)."""
    for kind in events.EVENT_TYPES:
        exported: set[str] = set()
        for item in attrs.fields(kind):
            exported.add(item.metadata.get("export_name") or item.name)
            if item.metadata.get("flatten"):
                exported.update(
                    key
                    for key in sum(item.metadata["telemetry"], ())
                    if f"`{key}`" in item.metadata["doc"]
                )
        plain, content = EVENT_FIELDS.get(kind.type, ((), ()))
        assert set(plain) | set(content) <= exported, kind.type
