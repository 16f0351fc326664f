"""The module size table of seri/: lines per module (the largest), and totals per package.

    python -m scripts.module_sizes                  # the working tree
    python -m scripts.module_sizes f5aa390          # any commit, read from git
    python -m scripts.module_sizes f5aa390 HEAD     # side by side, with the change

With several revisions, the modules listed are the ``--top`` largest of any of them (so a
module that was split still shows), ordered by the last. Lines are physical lines
(``wc -l``), blank lines and comments included: the size a reader faces. The output is
Markdown tables, to go into a note as it is.
"""

from __future__ import annotations

import argparse
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "seri"


def sizes_in_tree(root: Path = ROOT) -> dict[str, int]:
    """Lines of each ``seri/**/*.py`` of the working tree, by path."""
    return {
        str(path.relative_to(root)): _lines(path.read_bytes())
        for path in sorted((root / PACKAGE).rglob("*.py"))
    }


def sizes_at(revision: str, root: Path = ROOT) -> dict[str, int]:
    """Lines of each ``seri/**/*.py`` as ``revision`` has it."""
    listed = _git(root, "ls-tree", "-r", "--name-only", revision, "--", PACKAGE).decode()
    return {
        name: _lines(_git(root, "show", f"{revision}:{name}"))
        for name in listed.splitlines()
        if name.endswith(".py")
    }


def _git(root: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True).stdout


def _lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def totals(sizes: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Per package: (modules, lines)."""
    found: dict[str, tuple[int, int]] = {}
    for path, lines in sizes.items():
        package = str(Path(path).parent)  # seri/pure/agent/turn.py -> seri/pure
        modules, total = found.get(package, (0, 0))
        found[package] = (modules + 1, total + lines)
    return dict(sorted(found.items()))


def largest_table(columns: Sequence[tuple[str, Mapping[str, int]]], count: int) -> str:
    """The ``count`` largest modules of each column, with their size in every column (and,
    for two or more, the change from the first to the last)."""
    chosen: list[str] = []
    for _, sizes in reversed(columns):
        for path in sorted(sizes, key=lambda path: (-sizes[path], path))[:count]:
            if path not in chosen:
                chosen.append(path)
    last = columns[-1][1]
    chosen.sort(key=lambda path: (-last.get(path, 0), path))
    change = len(columns) > 1
    head = "| # | module | " + " | ".join(name for name, _ in columns)
    head += " | change |" if change else " |"
    rule = (
        "| ---: | --- | " + " | ".join("---:" for _ in columns) + (" | ---: |" if change else " |")
    )
    rows = []
    for place, path in enumerate(chosen, 1):
        cells = [_cell(sizes.get(path)) for _, sizes in columns]
        if change:
            cells.append(f"{last.get(path, 0) - columns[0][1].get(path, 0):+d}")
        rows.append(f"| {place} | `{path}` | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def totals_table(columns: Sequence[tuple[str, Mapping[str, int]]]) -> str:
    """Modules and lines per package in every column, and the whole package."""
    per_column = [totals(sizes) for _, sizes in columns]
    packages = sorted({name for found in per_column for name in found})
    head = "| package | " + " | ".join(f"{name}: modules | lines" for name, _ in columns) + " |"
    rule = "| --- | " + " | ".join("---: | ---:" for _ in columns) + " |"
    rows = []
    for package in [*packages, "all"]:
        cells = []
        for found in per_column:
            if package == "all":
                modules, lines = (
                    sum(m for m, _ in found.values()),
                    sum(n for _, n in found.values()),
                )
            else:
                modules, lines = found.get(package, (0, 0))
            cells.append(f"{modules} | {lines}")
        name = f"`{package}`" if package != "all" else f"**all of {PACKAGE}/**"
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows])


def _cell(lines: int | None) -> str:
    return "—" if lines is None else str(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("revisions", nargs="*", help="git revisions (none: the working tree)")
    parser.add_argument("--top", type=int, default=25, help="how many modules (default 25)")
    options = parser.parse_args(argv)
    columns = [(rev, sizes_at(rev)) for rev in options.revisions] or [
        ("working tree", sizes_in_tree())
    ]
    print(f"Largest {options.top} modules of {PACKAGE}/ (lines):\n")
    print(largest_table(columns, options.top))
    print("\nPer package:\n")
    print(totals_table(columns))


if __name__ == "__main__":
    main()
