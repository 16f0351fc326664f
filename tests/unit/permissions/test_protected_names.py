"""The walk for protected names below the project's top
(seri.io.permissions.stand_ins.ProtectedNames), which keeps each directory's listing between
commands: what it finds is what a walk that keeps nothing finds, whatever changed in between, on a
real directory tree."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.io.permissions.stand_ins import SETTLED_NANOSECONDS, ProtectedNames

DIRECTORIES = ("a", "a/b", "a/b/c", "d", "d/e", "a/b/c/f")
NAMES = (".git", ".mcp.json", ".seri", "other")
# (what to do, where, which name): a name made or removed, a directory made or removed, a tree
# renamed into place from outside the project.
STEPS = st.tuples(
    st.sampled_from(("make", "remove", "mkdir", "rmtree", "move_in")),
    st.sampled_from(DIRECTORIES),
    st.sampled_from(NAMES),
)


def settled_now() -> int:
    """A clock past the settling time: every listing is trusted at once, so a change the
    walk misses would show."""
    return time.time_ns() + 2 * SETTLED_NANOSECONDS


def apply(root: Path, outside: Path, step: tuple[str, str, str]) -> None:
    what, where, name = step
    directory = root / where
    if what == "mkdir":
        directory.mkdir(parents=True, exist_ok=True)
    elif what == "rmtree":
        shutil.rmtree(directory, ignore_errors=True)
    elif not directory.is_dir():
        return
    elif what == "make" and not (directory / name).exists():
        (directory / name).mkdir() if name != ".mcp.json" else (directory / name).write_text("")
    elif what == "remove" and (directory / name).exists():
        path = directory / name
        path.rmdir() if path.is_dir() else path.unlink()
    elif what == "move_in" and not (directory / "moved").exists():
        tree = outside / f"tree{time.monotonic_ns()}"
        (tree / "inner" / ".git").mkdir(parents=True)
        os.rename(tree, directory / "moved")


@settings(max_examples=12, deadline=None)
@given(steps=st.lists(STEPS, min_size=1, max_size=6))
def test_what_is_kept_finds_what_a_fresh_walk_finds(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, str, str]]
) -> None:
    base = tmp_path_factory.mktemp("walk")
    root, outside = base / "project", base / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "a" / "b").mkdir(parents=True)
    kept = ProtectedNames(clock=settled_now)
    assert kept.found(str(root)) == ProtectedNames().found(str(root))
    for step in steps:
        time.sleep(0.02)  # past a tick of the file system's clock
        apply(root, outside, step)
        assert sorted(kept.found(str(root))) == sorted(ProtectedNames().found(str(root))), step


def test_a_change_right_after_a_listing_is_seen(tmp_path: Path) -> None:
    """With the real clock a directory changed within the settling time is listed again, so a
    change stamped in the same tick as the listing cannot hide."""
    (tmp_path / "sub").mkdir()
    names = ProtectedNames()
    assert names.found(str(tmp_path)) == ()
    (tmp_path / "sub" / ".git").mkdir()
    assert names.found(str(tmp_path)) == (str(tmp_path / "sub" / ".git"),)


def test_the_walk_keeps_its_bounds(tmp_path: Path) -> None:
    """Depth and the number of directories looked at, as before: beyond them nothing is found."""
    deep = tmp_path / "1" / "2" / "3" / "4"
    deep.mkdir(parents=True)
    (deep / ".git").mkdir()
    (tmp_path / "1" / "2" / "3" / ".git").mkdir()
    names = ProtectedNames(clock=settled_now)
    for _ in range(2):
        assert names.found(str(tmp_path)) == (str(tmp_path / "1" / "2" / "3" / ".git"),)
    assert names.found(str(tmp_path), limit=3) == ()
