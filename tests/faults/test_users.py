"""The security tests' own users (tests/faults/users.py): cleaning up after an escape that
succeeded must not spread it."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.faults.users import AsUser


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root (CI runs as root)")
def test_closing_a_place_removes_nothing_mounted_beneath_it(
    throwaway_user: tuple[int, int],
) -> None:
    """What C9's remount escape does when no sandbox stops it (a directory bound over the
    project's .git/hooks): close() detaches the mount and removes the place, and the bound
    directory's files are still there (an rmtree across it once emptied /tmp)."""
    elsewhere = Path(tempfile.mkdtemp(prefix="seri-bound-"))
    (elsewhere / "keep.txt").write_text("not the test's to remove\n")
    where = AsUser("unprivileged", throwaway_user)
    hooks = where.project / ".git" / "hooks"
    hooks.mkdir(parents=True)
    try:
        subprocess.run(["mount", "--bind", str(elsewhere), str(hooks)], check=True)
        assert (hooks / "keep.txt").exists()
        where.close()
        assert not where.base.exists()
        assert (elsewhere / "keep.txt").read_text() == "not the test's to remove\n"
    finally:
        subprocess.run(["umount", "-l", str(hooks)], check=False, capture_output=True)
        (elsewhere / "keep.txt").unlink(missing_ok=True)
        elsewhere.rmdir()
