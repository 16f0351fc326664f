"""The stall rule's file digest (seri.io.agent.tree_state) on real trees: content decides, not
times; every change of a looked-at file shows; a check writing under a look taken alongside
it never makes the tree look unchanged (a false stall)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.io.agent.tree_state import SKIPPED_DIRS, TreeState

names = st.sampled_from(["a", "b", "src", "x.py", "test_y.py", "é", "data.json"])
paths = st.lists(names, min_size=1, max_size=3).map("/".join)
contents = st.binary(max_size=64)
# A tree: its files' relative paths and contents (no file is another's directory).
trees = st.dictionaries(paths, contents, min_size=1, max_size=8).filter(
    lambda tree: not any(other.startswith(path + "/") for path in tree for other in tree)
)
times = st.integers(1_000_000_000, 2_000_000_000)


def write(root: Path, files: dict[str, bytes]) -> None:
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(content)


@settings(deadline=None)
@given(trees, st.lists(times, min_size=8, max_size=8))
def test_the_same_contents_give_the_same_digest_whatever_the_times(
    files: dict[str, bytes], stamps: list[int]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, files)
        tree = TreeState(root)
        first = tree.digest()
        write(root, files)  # rewritten with the same bytes, as a test runner's caches are
        for name, stamp in zip(files, stamps, strict=False):
            os.utime(root / name, ns=(stamp, stamp * 1_000))
        assert tree.digest() == first == TreeState(root).digest()


@settings(deadline=None)
@given(trees, st.data())
def test_any_change_add_or_delete_of_a_file_changes_the_digest(
    files: dict[str, bytes], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, files)
        tree = TreeState(root)
        before = tree.digest()
        name = data.draw(st.sampled_from(sorted(files)))
        kind = data.draw(st.sampled_from(["content", "same size and times", "delete", "add"]))
        target = root / name
        if kind == "content":
            target.write_bytes(data.draw(contents.filter(lambda new: new != files[name])))
        elif kind == "same size and times":  # what a cache keyed on size and mtime misses
            old = target.stat()
            new = data.draw(
                st.binary(min_size=len(files[name]), max_size=len(files[name])).filter(
                    lambda new: new != files[name]
                )
            )
            target.write_bytes(new)
            os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
        elif kind == "delete":
            target.unlink()
        else:
            (target.parent / "added.txt").write_bytes(b"")
            if "added.txt" in files:
                return
        assert tree.digest() != before


@settings(deadline=None, max_examples=20)
@given(trees, st.sampled_from(sorted(SKIPPED_DIRS)))
def test_what_skipped_directories_hold_is_no_change(files: dict[str, bytes], skipped: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write(root, files)
        (root / skipped).mkdir(exist_ok=True)
        tree = TreeState(root)
        before = tree.digest()
        write(root, {f"{skipped}/mypy/cache.json": b"{}", f"{skipped}/x": b"new"})
        assert tree.digest() == before


def test_a_symlink_is_its_target_not_its_times(tmp_path: Path) -> None:
    (tmp_path / "link").symlink_to("a")
    tree = TreeState(tmp_path)
    before = tree.digest()
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("a")
    assert tree.digest() == before
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to("b")
    assert tree.digest() != before


def test_past_the_most_files_every_look_is_a_change(tmp_path: Path) -> None:
    write(tmp_path, {f"f{n}": b"same" for n in range(6)})
    tree = TreeState(tmp_path, max_files=5)
    assert tree.digest() != tree.digest()
    assert TreeState(tmp_path, max_files=6).digest() == TreeState(tmp_path).digest()


def test_a_small_tree_is_looked_at_before_the_check_starts(tmp_path: Path) -> None:
    write(tmp_path, {"a.py": b"1", "b.py": b"2"})
    tree = TreeState(tmp_path, alongside_from=10)
    before = tree.digest()
    look = tree.look_for_check()
    (tmp_path / "a.py").write_bytes(b"the check wrote this")
    assert look() == before


def test_a_check_writing_under_a_look_alongside_never_looks_like_a_stall(tmp_path: Path) -> None:
    """Each round, the task edits a file and the check, started as the look starts, puts it
    back as the previous check saw it (the worst case: the model's edit undone under the
    walk), sooner or later. The tree the task left differs from the one before each time, so
    the look must never give the previous digest, whichever of the walk and the check gets to
    the file first."""
    files = {f"src/d{n // 100}/f{n}.py": b"before\n" for n in range(1_500)}
    write(tmp_path, files)
    time.sleep(0.05)  # older than the look's fence
    tree = TreeState(tmp_path, alongside_from=0)
    base = tree.look_for_check()()
    assert not base.startswith("touched")
    raced = 0
    for round_, delay in enumerate((0.0, 0.002, 0.005, 0.01, 0.02, 0.05) * 2):
        edited = f"src/d9/f{900 + round_}.py"  # in the directory the walk reaches last
        (tmp_path / edited).write_bytes(b"the model's edit\n")
        time.sleep(0.05)
        look = tree.look_for_check()
        restore = f"sleep {delay}; printf 'before\\n' > {edited}"
        subprocess.run(["bash", "-c", restore], cwd=tmp_path, check=True)
        digest = look()
        assert digest != base, f"round {round_}: the model's edit was missed"
        raced += digest.startswith("touched-during-check")
        time.sleep(0.05)
        assert tree.digest() == base  # the check's rewrite, the same bytes: no change
    assert raced, "the check never wrote under the walk: the race was not exercised"


def test_the_benchmark_tree_has_the_files_asked_for(tmp_path: Path) -> None:
    from scripts.bench.tree_digest import make_tree

    make_tree(tmp_path, 45)
    tree = TreeState(tmp_path)
    tree.digest()
    assert tree.files_seen == 45
    assert len(list((tmp_path / "src" / "d0" / "d0").iterdir())) == 3  # 20, 20 and 5 files
