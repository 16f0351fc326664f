"""Protected paths inside the project, found and held in place for the OS sandbox.

A read-only bind mount protects a path only if something is there to mount on. A protected
path that does not exist yet (``<project>/.git`` in a project inside a repository,
``.mcp.json``, ``~/.bash_profile`` when the project is the home directory) gets an empty
stand-in for the time a command runs: an empty directory or an empty file, created here,
bound read-only in the command's mount namespace (so the command can neither write into it
nor remove or rename it: it is a mount point there), and removed when the last command that
needed it has ended, if it is still empty. Parents made for it (``~/.config`` for
``~/.config/git``) are removed the same way.

``found_by_name`` walks the project for the protected names deeper down (a nested
repository's ``.git``), so those are bound read-only too.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Iterator

from seri.pure.protected_paths import PROTECTED_DIR_NAMES, PROTECTED_FILE_NAMES, is_within

# How far the walk for nested protected names goes: directories at most this deep below the
# project's top, and at most this many of them, breadth first (it runs before every command;
# README: Sandbox says what lies beyond).
WALK_DEPTH = 3
WALK_LIMIT = 1_000
_NAMES = {*PROTECTED_DIR_NAMES, *PROTECTED_FILE_NAMES}


def found_by_name(
    project: str, limit: int = WALK_LIMIT, depth: int = WALK_DEPTH
) -> tuple[str, ...]:
    """Every path below the project's top whose name is protected (``.git``, ``.ssh``,
    ``.seri``, ``.mcp.json``), in directories at most ``depth`` below the top, breadth first,
    links not followed, at most ``limit`` directories looked at."""
    found: list[str] = []
    queue = [(project, 0)]
    seen = 0
    while queue and seen < limit:
        directory, level = queue.pop(0)
        seen += 1
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if entry.name.lower() in _NAMES:
                if directory != project:
                    found.append(entry.path)
                continue  # what is inside a protected directory is covered by it
            with contextlib.suppress(OSError):
                if level < depth and entry.is_dir(follow_symlinks=False):
                    queue.append((entry.path, level + 1))
    return tuple(found)


class StandIns:
    """The empty stand-ins of one seri process, shared by the commands running at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        # What was created, in order (a parent before what it holds).
        self._made: list[tuple[str, bool]] = []

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """For the time of one command: stand-ins made now stay until the last one ends."""
        with self._lock:
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    self._remove_all()

    def place(self, path: str, is_dir: bool, project: str) -> bool:
        """Put an empty stand-in at ``path`` (inside ``project``), with any missing parents;
        False when it cannot be made (a read-only project: nothing can be created there)."""
        with self._lock:
            missing: list[str] = []
            parent = os.path.dirname(path)
            while not os.path.lexists(parent) and is_within(parent, project):
                missing.append(parent)
                parent = os.path.dirname(parent)
            try:
                for directory in reversed(missing):
                    os.mkdir(directory, 0o755)
                    self._made.append((directory, True))
                if is_dir:
                    os.mkdir(path, 0o555)
                else:
                    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o444))
            except OSError:
                return False
            self._made.append((path, is_dir))
            return True

    def _remove_all(self) -> None:
        """Take every stand-in away again, newest first, each only if it is still empty (a
        command could not write into one; this keeps anything else from being lost)."""
        while self._made:
            path, is_dir = self._made.pop()
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                if is_dir and stat.S_ISDIR(info.st_mode):
                    os.rmdir(path)  # fails unless empty
                elif not is_dir and stat.S_ISREG(info.st_mode) and info.st_size == 0:
                    os.unlink(path)
