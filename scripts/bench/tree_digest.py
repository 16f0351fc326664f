"""The stall rule's file digest (``seri.io.agent.tree_state``) on small and large projects,
and what it adds to a goal's check. `python -m scripts.bench.tree_digest`

Trees, each made once under a temporary directory:

- ``small``: SMALL_FILES generated source files (~800: a small project);
- ``large``: LARGE_FILES generated source files in nested directories (~35,000);
- ``this repository``: its tracked files (``git archive HEAD``) with a copy of its ``.venv``'s
  packages under ``.cache/`` (as ``make`` keeps tools there: ~8,000 files the digest must not
  walk),
  skipped when the repository's ``.venv`` is absent;
- with SERI_TREE=path, that tree too, as it is.

Per tree, RUNS times each, wall and CPU time (this process's, the walk is in-process) with
the load averages:

- cold: a first look (every file read and hashed; the OS's page cache is warm, so this is
  seri's work, not the disk's);
- warm: a later look at an unchanged tree (what every check after the first pays), as
  ``digest()`` (the walk alone);
- the check's added wall time: ``sleep CHECK_SECONDS`` run as a goal's check runs it (the
  look taken as ``TreeState.look_for_check`` takes it: before the command for a small tree,
  alongside it for a large one) against the same command alone, in pairs
  (``scripts.bench.goal_check``'s pairs and intervals). ``sleep`` stands for a check whose
  own time is longer than the look; a check shorter than the look waits for it.

Writes bench-results/tree_digest.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.goal_check import RUNS, Added, alone, load, ms, pairs
from seri.io.agent.tree_state import TreeState

SMALL_FILES = int(os.environ.get("SMALL_FILES", "800"))
LARGE_FILES = int(os.environ.get("LARGE_FILES", "35000"))
CHECK_SECONDS = float(os.environ.get("CHECK_SECONDS", "1"))
OUT = Path(os.environ.get("BENCH_OUT", "bench-results/tree_digest.md"))
REPOSITORY = Path(__file__).resolve().parents[2]


def make_tree(root: Path, files: int) -> None:
    """``files`` small source files, 20 to a directory, directories 10 to a parent: the
    shape of a real project's tree (most of a large one's cost is per file and per
    directory, not per byte)."""
    for n in range(files):
        directory = root / "src" / f"d{n // 2000}" / f"d{n // 200}" / f"d{n // 20}"
        if n % 20 == 0:
            directory.mkdir(parents=True, exist_ok=True)
        (directory / f"mod_{n}.py").write_text(f"VALUE_{n} = {n}\n" * 20)


def make_repository_copy(root: Path) -> bool:
    """This repository's tracked files, with its .venv copied under .cache/ (False: no
    .venv to copy)."""
    venv = REPOSITORY / ".venv"
    if not venv.is_dir():
        return False
    root.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPOSITORY), "archive", "HEAD"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    # A tool's environment kept under .cache/ (its site-packages), as `make` keeps them.
    shutil.copytree(venv / "lib", root / ".cache" / "tools" / "lib", symlinks=True)
    return True


def timed_look(look: Callable[[], str]) -> tuple[float, float]:
    """Wall and CPU seconds of one look."""
    cpu, wall = time.process_time(), time.perf_counter()
    look()
    return time.perf_counter() - wall, time.process_time() - cpu


def looks(root: Path) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Median (wall, CPU) of a first look and of a later one; the files seen."""
    cold = [timed_look(TreeState(root).digest) for _ in range(max(3, RUNS // 3))]
    tree = TreeState(root)
    tree.digest()
    warm = [timed_look(tree.digest) for _ in range(RUNS)]

    def median(samples: list[tuple[float, float]]) -> tuple[float, float]:
        return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)

    return median(cold), median(warm), tree.files_seen


def as_check(root: Path, command: str) -> Callable[[], str]:
    """``command`` with the look a goal's check takes of ``root`` (from the second check on:
    the tree has been looked at once)."""
    tree = TreeState(root)
    tree.digest()
    run_alone = alone(command, root)

    def run() -> str:
        look = tree.look_for_check()
        output = run_alone()
        look()
        return output

    return run


def row(label: str, root: Path) -> str:
    before = load()
    cold, warm, files = looks(root)
    command = f"sleep {CHECK_SECONDS:g}"
    runs = pairs(alone(command, root), as_check(root, command))
    added = Added.of([b[0] - a[0] for a, b in runs])
    return (
        f"| {label} | {files} | {ms(cold[0])}, {ms(cold[1])} | {ms(warm[0])}, {ms(warm[1])} "
        f"| {added} | {'ok' if added.high <= 20 else added.verdict()} | {before} → {load()} |"
    )


def main() -> int:
    lines = [
        f"# The stall rule's file digest ({RUNS} looks; {RUNS} pairs for the check)",
        "",
        f"Machine: {os.cpu_count()} cores. Times are medians, ms; the check's added wall time "
        f"is the median of the pairs' differences [its 95% interval] for `sleep "
        f"{CHECK_SECONDS:g}` as a goal's check against alone. Load averages (1 / 5 / 15 min) "
        "before → after.",
        "",
        "| tree | files seen | first look: wall, CPU | later look: wall, CPU | check's added "
        "wall | ≤ 20 ms | load |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        small, large, copy = Path(tmp, "small"), Path(tmp, "large"), Path(tmp, "repository")
        make_tree(small, SMALL_FILES)
        make_tree(large, LARGE_FILES)
        trees = [(f"generated, {SMALL_FILES}", small), (f"generated, {LARGE_FILES}", large)]
        if make_repository_copy(copy):
            trees.append(("this repository, a venv in .cache/", copy))
        if os.environ.get("SERI_TREE"):
            trees.append((os.environ["SERI_TREE"], Path(os.environ["SERI_TREE"])))
        for label, root in trees:
            lines.append(row(label, root))
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
