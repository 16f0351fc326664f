"""scripts/module_sizes.py: the module size table the issue notes quote."""

from __future__ import annotations

import subprocess
from pathlib import Path

from scripts.module_sizes import largest_table, sizes_at, sizes_in_tree, totals, totals_table

BEFORE = {"seri/pure/a.py": 10, "seri/pure/b.py": 300, "seri/io/c.py": 5}
AFTER = {"seri/pure/a.py": 12, "seri/pure/b1.py": 150, "seri/pure/b2.py": 140, "seri/io/c.py": 5}


def test_totals_per_package() -> None:
    assert totals(AFTER) == {"seri/io": (1, 5), "seri/pure": (3, 302)}


def test_a_split_module_still_shows_and_the_change_is_signed() -> None:
    table = largest_table([("before", BEFORE), ("after", AFTER)], 1).splitlines()
    assert table[0] == "| # | module | before | after | change |"
    assert table[2:] == [
        "| 1 | `seri/pure/b1.py` | — | 150 | +150 |",
        "| 2 | `seri/pure/b.py` | 300 | — | -300 |",
    ]


def test_the_whole_row_sums_every_package() -> None:
    last = totals_table([("before", BEFORE), ("after", AFTER)]).splitlines()[-1]
    assert last == "| **all of seri/** | 3 | 315 | 4 | 307 |"


def test_a_revision_is_read_from_git_like_the_tree(tmp_path: Path) -> None:
    (tmp_path / "seri" / "pure").mkdir(parents=True)
    (tmp_path / "seri" / "pure" / "x.py").write_text("a\nb\nno newline at the end")
    (tmp_path / "seri" / "notes.md").write_text("not a module\n")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    assert sizes_in_tree(tmp_path) == sizes_at("HEAD", tmp_path) == {"seri/pure/x.py": 3}
