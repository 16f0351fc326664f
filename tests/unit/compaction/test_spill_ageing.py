"""Full-output spill files of long commands age out with the recordings' window."""

from __future__ import annotations

import os
import time
from pathlib import Path

from seri.io.trajectories.trajectory_prune import age_out_spill


def test_old_spill_files_go_and_new_ones_stay(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    spill.mkdir()
    now = time.time()
    old, fresh = spill / "old.txt", spill / "fresh.txt"
    old.write_text("x")
    fresh.write_text("y")
    os.utime(old, (now - 31 * 86_400, now - 31 * 86_400))
    outside = tmp_path / "keep.txt"
    outside.write_text("z")
    os.utime(outside, (now - 99 * 86_400, now - 99 * 86_400))
    (spill / "link").symlink_to(outside)
    assert age_out_spill(tmp_path, now, 30) == 1
    assert not old.exists()
    assert fresh.exists()
    assert outside.exists()


def test_no_spill_directory_is_fine(tmp_path: Path) -> None:
    assert age_out_spill(tmp_path, time.time(), 30) == 0
