"""Every external JSON and line source goes through the bounded reader (issue 25).

Read from seri's own source: a JSON parse anywhere but ``seri.pure.inputs.json_text`` (which checks
depth before parsing) fails here, and so does a read without a size (``.read()``,
``read_text()``, ``read_bytes()``, ``readline()``) that is not listed below with the reason it
needs no bound. A new source therefore either uses the bounded reader or is argued for here;
tests/faults/test_hostile_input.py then fuzzes each source in ``SOURCES``.
"""

from __future__ import annotations

import ast
from pathlib import Path

from seri.pure.inputs.bounded_input import SOURCES

SERI = Path(__file__).resolve().parent.parent / "seri"

# The one module allowed to call json.loads.
JSON_READER = "seri/pure/inputs/json_text.py"
# (module, function, call): why this JSON parse is not an external source.
OWN_JSON = {
    (
        "seri/io/session/codec.py",
        "<module>",
        "scan_once",
    ): "seri.db's own message rows, read back whole",
    ("seri/pure/compaction/recap_answer.py", "_find_json_object", "raw_decode"): (
        "the summarizer's answer: bounded by the answer budget; RecursionError is caught"
    ),
}
# (module, function, call): why this read needs no size of its own.
UNSIZED_READS = {
    ("seri/commands/chat.py", "_prompt_text", "read"): "-p -: the person's own prompt on stdin",
    ("seri/io/tools/files.py", "snapshot_file", "read"): (
        "a checkpoint of a project file: max_bytes is None only for seri's own callers"
    ),
    ("seri/io/session/leases.py", "_boot_id", "read"): "the kernel's boot id (/proc)",
    ("seri/io/session/leases.py", "_stat_fields", "read"): "the kernel's /proc/PID/stat line",
    (
        "seri/io/permissions/landlock.py",
        "_last_capability",
        "read",
    ): "the kernel's cap_last_cap (/proc)",
    ("seri/runtime/terminal/chat_info.py", "_text_now", "read_bytes"): (
        "/diff: a project file's text now, beside its checkpoint, which holds it whole too"
    ),
    ("seri/io/tools/memory_store.py", "approve", "read_bytes"): "seri's own memory file",
    (
        "seri/io/tools/write_tools.py",
        "_read_text_for_edit",
        "read",
    ): "after fstat: at most FILE_CAP_BYTES",
    ("seri/runtime/compaction/compact_plan.py", "<any>", "read"): "a job's read(), not I/O",
    ("seri/runtime/compaction/shell_compaction.py", "<any>", "read"): "a job's read(), not I/O",
    ("seri/runtime/terminal/repl.py", "_history_entries", "read"): "seri's own prompt history file",
    (
        "seri/runtime/terminal/resume_picker.py",
        "<any>",
        "readline",
    ): "a person's answer at a prompt",
    (
        "seri/runtime/session/sessions_manage.py",
        "<any>",
        "readline",
    ): "a person's answer at a prompt",
    (
        "seri/runtime/session/rewind.py",
        "_current_bytes",
        "read_bytes",
    ): "a checkpointed project file",
}
_PARSES = frozenset({"loads", "load", "raw_decode", "scan_once", "make_scanner"})
_UNSIZED = frozenset({"read", "readline", "readlines", "read_text", "read_bytes"})


def _calls() -> list[tuple[str, str, str, int, int]]:
    """(module, enclosing function, called attribute, line, positional arguments)."""
    found = []
    for path in sorted(SERI.rglob("*.py")):
        module = str(path.relative_to(SERI.parent))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owners: dict[ast.AST, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    owners.setdefault(inner, node.name)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = owners.get(node, "<module>")
                found.append((module, owner, node.func.attr, node.lineno, len(node.args)))
            elif isinstance(node, ast.Attribute) and node.attr == "scan_once":
                found.append((module, owners.get(node, "<module>"), "scan_once", node.lineno, 0))
    return found


def _listed(table: dict[tuple[str, str, str], str], module: str, owner: str, call: str) -> bool:
    return (module, owner, call) in table or (module, "<any>", call) in table


def test_json_is_parsed_only_by_the_bounded_reader() -> None:
    strays = [
        f"{module}:{line} ({owner}) calls .{call}"
        for module, owner, call, line, _ in _calls()
        if call in _PARSES
        and module != JSON_READER
        and not _listed(OWN_JSON, module, owner, call)
        # json_text.loads / loads_bounded / loads_stored are the reader itself
        and not _reads_json_text(module, line)
    ]
    assert not strays, (
        "parse external JSON with seri.pure.inputs.json_text (bounded):\n" + "\n".join(strays)
    )


def _reads_json_text(module: str, line: int) -> bool:
    text = (SERI.parent / module).read_text(encoding="utf-8").splitlines()[line - 1]
    return "json_text." in text or "loads_lenient" in text or "pickle" in text


def test_no_read_without_a_size_unless_argued_for() -> None:
    strays = [
        f"{module}:{line} ({owner}) calls .{call}()"
        for module, owner, call, line, args in _calls()
        if call in _UNSIZED and args == 0 and not _listed(UNSIZED_READS, module, owner, call)
    ]
    assert not strays, "give the read a size (seri.pure.inputs.bounded_input), or argue here:\n" + (
        "\n".join(strays)
    )


def test_every_argued_exception_still_exists() -> None:
    """An entry whose call is gone would let a new one in under its name."""
    present = {(module, owner, call) for module, owner, call, _, _ in _calls()}
    anywhere = {(module, call) for module, _, call, _, _ in _calls()}
    for module, owner, call in (*OWN_JSON, *UNSIZED_READS):
        if owner == "<any>":
            assert (module, call) in anywhere, (module, call)
        else:
            assert (module, owner, call) in present, (module, owner, call)


def test_every_source_is_fuzzed() -> None:
    """Each source in SOURCES has a fuzz test (FUZZED_SOURCES in test_hostile_input.py),
    and each test named there exists; `make fuzz` runs them all long."""
    from tests.faults.test_hostile_input import FUZZED_SOURCES

    assert set(FUZZED_SOURCES) == set(SOURCES)
    root = Path(__file__).resolve().parent.parent
    for source, test in FUZZED_SOURCES.items():
        module, name = test.split("::")
        assert name.startswith("test_H2_fuzz_"), (source, test)  # what `make fuzz` selects
        assert f"def {name}(" in (root / module).read_text(), (source, test)
