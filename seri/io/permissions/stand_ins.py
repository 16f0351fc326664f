"""Protected paths inside the project, found and held in place for the OS sandbox.

A read-only bind mount protects a path only if something is there to mount on. A protected
path that does not exist yet (``<project>/.git`` in a project inside a repository,
``.mcp.json``, ``~/.bash_profile`` when the project is the home directory) gets an empty
stand-in for the time a command runs: an empty directory or an empty file, created here,
bound read-only in the command's mount namespace (so the command can neither write into it
nor remove or rename it: it is a mount point there), and removed when the last command that
needed it has ended, if it is still empty. Parents made for it (``~/.config`` for
``~/.config/git``) are removed the same way.

``ProtectedNames`` walks the project for the protected names deeper down (a nested
repository's ``.git``), so those are bound read-only too.
"""

from __future__ import annotations

import collections
import contextlib
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator

from seri.pure.permissions.protected_paths import (
    PROTECTED_DIR_NAMES,
    PROTECTED_FILE_NAMES,
    is_within,
)

# How far the walk for nested protected names goes: directories at most this deep below the
# project's top, and at most this many of them, breadth first (it runs before every command;
# README: Sandbox says what lies beyond).
WALK_DEPTH = 3
WALK_LIMIT = 1_000
_NAMES = {*PROTECTED_DIR_NAMES, *PROTECTED_FILE_NAMES}


# A directory listed within this long of its last change is listed again by the next walk: a
# change made right after the listing could carry the same timestamp (file systems stamp
# with a coarse clock), and its stat alone would not show it.
SETTLED_NANOSECONDS = 1_000_000_000

# A directory's listing as the walk keeps it: its stat when listed (None: too fresh to trust),
# the protected names in it, its subdirectories.
_Listing = tuple[tuple[int, ...] | None, tuple[str, ...], tuple[str, ...]]


class ProtectedNames:
    """The walk for protected names below the project's top, one per seri process: it runs
    before every command, and a directory whose stat has not changed since the last walk
    listed it is not listed again (a stat costs ~2 us, a listing ~40 us; ~80 directories in
    a small repository, 1,000 at most)."""

    def __init__(self, clock: Callable[[], int] = time.time_ns) -> None:
        self._listings: dict[str, _Listing] = {}
        self._clock = clock

    def found(
        self, project: str, limit: int = WALK_LIMIT, depth: int = WALK_DEPTH
    ) -> tuple[str, ...]:
        """Every path below the project's top whose name is protected (``.git``, ``.ssh``,
        ``.seri``, ``.mcp.json``), in directories at most ``depth`` below the top, breadth
        first, links not followed, at most ``limit`` directories looked at."""
        found: list[str] = []
        listings: dict[str, _Listing] = {}
        queue = collections.deque([(project, 0)])
        seen = 0
        while queue and seen < limit:
            directory, level = queue.popleft()
            seen += 1
            listing = self._listing(directory)
            if listing is None:
                continue
            listings[directory] = listing
            _, names, subdirectories = listing
            if directory != project:
                found.extend(names)
            if level < depth:
                queue.extend((path, level + 1) for path in subdirectories)
        self._listings = listings  # what this walk did not reach is forgotten
        return tuple(found)

    def _listing(self, directory: str) -> _Listing | None:
        try:
            info = os.stat(directory, follow_symlinks=False)
        except OSError:
            return None
        key = (
            info.st_dev,
            info.st_ino,
            info.st_mtime_ns,
            info.st_ctime_ns,
            info.st_nlink,
            info.st_size,
        )
        known = self._listings.get(directory)
        if known is not None and known[0] == key:
            return known
        names: list[str] = []
        subdirectories: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name.lower() in _NAMES:
                        names.append(entry.path)
                        continue  # what is inside a protected directory is covered by it
                    with contextlib.suppress(OSError):
                        if entry.is_dir(follow_symlinks=False):
                            subdirectories.append(entry.path)
        except OSError:
            return None
        settled = self._clock() - max(info.st_mtime_ns, info.st_ctime_ns) > SETTLED_NANOSECONDS
        return (key if settled else None), tuple(names), tuple(subdirectories)


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
