"""The functional core stays pure: seri/pure imports nothing that touches the world."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PURE = Path(__file__).resolve().parent.parent / "seri" / "pure"

# Whole modules whose import means I/O, the clock, randomness or the environment.
FORBIDDEN_MODULES = {
    "apsw",
    "httpx",
    "cattrs",
    "os",
    "time",
    "random",
    "subprocess",
    "socket",
    "shutil",
    "tempfile",
    "sqlite3",
    "urllib",
    "http",
    "pathlib",
    "io",
    "sys",
    "threading",
    "signal",
    "secrets",
    "uuid",
    "glob",
    "asyncio",
    "multiprocessing",
    "seri.io",
    "seri.commands",
}
# Calls that read the clock or the environment even from otherwise harmless modules.
FORBIDDEN_CALLS = {"now", "today", "utcnow", "getenv", "open", "input", "print", "astimezone"}


def _pure_files() -> list[Path]:
    # Every module of the floor, inside its sub-packages too (issue 30: rooms by domain).
    return sorted(PURE.rglob("*.py"))


def _pure_id(path: Path) -> str:
    return path.relative_to(PURE).as_posix()


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", _pure_files(), ids=_pure_id)
def test_pure_module_imports_nothing_impure(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bad = {
        name
        for name in _imported(tree)
        if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_MODULES)
    }
    assert not bad, f"{path.name} imports {sorted(bad)}"


@pytest.mark.parametrize("path", _pure_files(), ids=_pure_id)
def test_pure_module_reads_no_clock_or_environment(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = {
        node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    assert not calls & FORBIDDEN_CALLS, f"{path.name} calls {sorted(calls & FORBIDDEN_CALLS)}"


def test_the_check_itself_catches_an_impure_import(tmp_path: Path) -> None:
    tree = ast.parse("import os\nfrom time import monotonic\n")
    assert _imported(tree) >= {"os", "time"}
