"""docopt-ng reads every command line (issue 30: one argv reader): read statically from the
source, no other argument parser is imported anywhere in seri, docopt is called in two
places only (`seri`'s own usage in seri/commands/main.py, and ``parse_usage`` for a
subcommand's), and every subcommand reads its words through ``parse_usage``.

(``seri.pure.session.resume_choice`` looks for a bare ``--resume`` before docopt reads the
line: docopt has no option whose value may be left out, and that is what opens the picker.)"""

from __future__ import annotations

import ast
from pathlib import Path

from seri.commands.main import COMMANDS

ROOT = Path(__file__).resolve().parents[3]
SERI = ROOT / "seri"
OTHER_PARSERS = {"argparse", "optparse", "getopt", "click", "typer", "fire", "plac"}
DOCOPT_CALLERS = {"seri/commands/main.py", "seri/runtime/agent/running.py"}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def _calls(path: Path, name: str) -> int:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) == name or getattr(node.func, "attr", None) == name)
    )


def _sources() -> list[Path]:
    return sorted(SERI.rglob("*.py"))


def test_no_other_argument_parser_is_imported() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imports(path) & OTHER_PARSERS)
        for path in _sources()
        if _imports(path) & OTHER_PARSERS
    }
    assert offenders == {}


def test_docopt_is_called_only_by_the_two_readers() -> None:
    callers = {
        str(path.relative_to(ROOT))
        for path in _sources()
        if "docopt" in _imports(path) or _calls(path, "docopt")
    }
    assert callers == DOCOPT_CALLERS


def test_every_subcommand_reads_its_words_through_parse_usage() -> None:
    commands = [ROOT / (module.replace(".", "/") + ".py") for module in COMMANDS.values()]
    assert {path.name for path in commands} == {
        path.name for path in (SERI / "commands").glob("*.py")
    } - {"__init__.py", "main.py"}
    assert [path.name for path in commands if not _calls(path, "parse_usage")] == []
