"""The shape of the code: no import cycles, and each layer imports only the layers below it.

Read statically from the source, every import counted: those at the top of a module, those
inside functions (imported late for speed) and those only for type checking. A cycle among
any of them is two modules that cannot be understood (or moved) one without the other.

    seri.pure      imports only seri.pure
    seri.io        imports seri.pure and seri.io
    seri.runtime   imports seri.pure, seri.io and seri.runtime
    seri.commands  imports all of them; nothing imports a command (main runs them by name)

And one meaning per name: no two classes under seri/ share a name (private ones, starting
with ``_``, aside), so a name in a review or a traceback says which thing it is.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERI = ROOT / "seri"
LAYERS = ("seri.pure", "seri.io", "seri.runtime", "seri.commands")
# What each layer may import besides itself.
ALLOWED = {
    "seri.pure": (),
    "seri.io": ("seri.pure",),
    "seri.runtime": ("seri.pure", "seri.io"),
    "seri.commands": ("seri.pure", "seri.io", "seri.runtime"),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules(root: Path = SERI) -> dict[str, Path]:
    return {module_name(path): path for path in sorted(root.rglob("*.py"))}


def imports_of(path: Path, known: Iterable[str]) -> set[str]:
    """The seri modules ``path`` imports, wherever in it the import stands."""
    names = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from seri.io import conversations`` imports the module
            # seri.io.session.conversations.
            candidates = [f"{node.module}.{alias.name}" for alias in node.names]
            candidates = [c if c in names else node.module for c in candidates]
        else:
            continue
        found.update(c for c in candidates if c in names)
    return found


def graph(root: Path = SERI) -> dict[str, set[str]]:
    modules = all_modules(root)
    return {
        name: {m for m in imports_of(path, modules) if m != name} for name, path in modules.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def layer_of(module: str) -> str | None:
    return next((layer for layer in LAYERS if module.startswith(layer + ".")), None)


def test_no_module_takes_part_in_an_import_cycle() -> None:
    """Counting imports inside functions and for type checking too."""
    assert cycles(graph()) == []


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_imports_only_the_layers_below_it(layer: str) -> None:
    wrong = []
    for module, imported in graph().items():
        if layer_of(module) != layer:
            continue
        for target in imported:
            other = layer_of(target)
            if other is not None and other != layer and other not in ALLOWED[layer]:
                wrong.append(f"{module} imports {target}")
    assert wrong == []


def test_the_commands_package_holds_one_module_per_subcommand() -> None:
    """Besides main (the dispatcher), every module of seri/commands is a subcommand."""
    from seri.commands.main import COMMANDS

    modules = {path.stem for path in (SERI / "commands").glob("*.py")} - {"__init__", "main"}
    assert modules == set(COMMANDS)
    assert all(COMMANDS[name] == f"seri.commands.{name}" for name in COMMANDS)


def test_the_check_finds_a_cycle_through_a_late_import(tmp_path: Path) -> None:
    """The checks above can fail: two modules importing each other, one of them inside a
    function and one only for type checking, are a cycle."""
    package = tmp_path / "seri"
    (package / "runtime").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "runtime" / "__init__.py").write_text("")
    (package / "runtime" / "a.py").write_text("def f():\n    from seri.runtime import b\n")
    (package / "runtime" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from seri.runtime.a import f\n"
    )
    modules = {module_name_in(tmp_path, p): p for p in sorted(package.rglob("*.py"))}
    edges = {
        name: {m for m in imports_of(path, modules) if m != name} for name, path in modules.items()
    }
    assert cycles(edges) == [["seri.runtime.a", "seri.runtime.b"]]


def module_name_in(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def classes_named_twice(root: Path = SERI) -> dict[str, list[str]]:
    """Each public class name defined more than once under ``root`` (anywhere in a module,
    nested or under ``if TYPE_CHECKING``), with the modules that define it."""
    where: defaultdict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where[node.name].append(path.relative_to(root.parent).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_two_classes_share_a_name() -> None:
    assert classes_named_twice() == {}


def test_the_check_finds_a_class_name_defined_twice(tmp_path: Path) -> None:
    """The check above can fail: the same name in two modules (one of them nested under
    ``if TYPE_CHECKING``) is found; private names and distinct names are not."""
    package = tmp_path / "seri"
    (package / "pure").mkdir(parents=True)
    (package / "pure" / "a.py").write_text("class Fold:\n    pass\n\nclass _Run:\n    pass\n")
    (package / "pure" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    class Fold:\n        pass\n\nclass _Run:\n    pass\n\nclass PasteFold:\n    pass\n"
    )
    assert classes_named_twice(package) == {"Fold": ["seri/pure/a.py", "seri/pure/b.py"]}
