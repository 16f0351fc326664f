"""A digest of a project's files, for the goal's stall rule: did anything change between two
checks?

By content, not by time: a test runner rewrites its caches (``.pytest_cache``,
``__pycache__``) on every run with the same bytes, and that must not count as a change. A file
is read again only when its size, modification time, change time or inode moved since the
last look (and a file changed within ``RACY_NS`` of a look is read again next time: two
writes within one tick of the file system's clock can leave all four the same), so a later
look at an unchanged tree costs one ``lstat`` a file. Version control's own directories,
virtual environments, installed packages and tools' caches are not looked into
(``SKIPPED_DIRS``: what a model's fix changes is the project's own files, and these can hold
tens of thousands); past ``MAX_FILES`` files the digest says so and counts as changed every
time, so a huge tree never makes a run stall by mistake.

A check's look (``look_for_check``) is the files as the task left them. On a tree of fewer
than ``ALONGSIDE_FROM`` files it is taken before the check starts (a few milliseconds). On a
larger one it is taken alongside the check, in a thread, so the check's own time hides it;
what the check writes meanwhile could otherwise be read as the task's work, so the look has a
fence: a file or directory whose change time is past the moment the check was about to start
(within the clock's grain: ``FINE_SLACK_NS``, ``COARSE_SLACK_NS``), or that vanishes or moves
under the walk, makes the digest one of its own, which can only count as changed. A race with
the check can therefore keep a run going, never stop it as stalled.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import threading
import time
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path

MAX_FILES = 50_000
# From this many files (the last look's count; the first look's too, the count unknown), a
# check's look runs alongside the check: below it, a later look costs a few milliseconds
# (4.5 ms at 1,000 files here, 11.8 ms at 2,000: with the ~10 ms a check costs around its
# command, 2,000 would pass issue 27's 20 ms).
ALONGSIDE_FROM = 1_000
# Within this of a look, a file's times cannot tell one write from the next: 1 s and 2 s
# granularity file systems, and the kernel's coarse clock behind the one read here. A file
# changed so recently is read again at the next look.
RACY_NS = 2_000_000_000
# How far a file's change time can fall behind the moment of the change, as this process's
# clock reads it: the kernel stamps files from its coarse clock (one tick, 1 to 10 ms, behind);
# a coarse file system truncates to whole seconds (2 for FAT).
FINE_SLACK_NS = 20_000_000
COARSE_SLACK_NS = 2_000_000_000
SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        "node_modules",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".hypothesis",
        # Tools' caches by convention (XDG's name, mypy's and others' here), bundlers' and
        # build systems' own.
        ".cache",
        ".parcel-cache",
        ".turbo",
        ".gradle",
        ".pytype",
    }
)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
# A file as its lstat saw it: size, modification and change times, inode.
StatKey = tuple[int, int, int, int]
_BY_NAME = attrgetter("name")
_NEVER: StatKey = (-1, -1, -1, -1)  # a key no file has: read it again next time


class _Touched(Exception):
    """The walk met something changed after the fence: the check is writing."""


class TreeState:
    """Looks at one project's files, remembering what it read last time."""

    def __init__(
        self, root: Path, alongside_from: int = ALONGSIDE_FROM, max_files: int = MAX_FILES
    ) -> None:
        self.root = root
        self._alongside_from = alongside_from
        self._max_files = max_files
        self._known: dict[str, tuple[StatKey, str]] = {}
        self._counted: int | None = None
        self._looks = 0
        self._lock = threading.Lock()

    @property
    def files_seen(self) -> int:
        """The files the last whole look saw."""
        return self._counted or 0

    def digest(self) -> str:
        """The files' paths and contents as one hex digest (nothing else writing them)."""
        return self._look(fence=None)

    def look_for_check(self) -> Callable[[], str]:
        """Start the look a check compares, just before the check starts; the returned call,
        made once the check has ended, gives its digest."""
        if self._counted is not None and self._counted < self._alongside_from:
            digest = self.digest()
            return lambda: digest
        fence = time.time_ns()
        found: list[str] = []
        walker = threading.Thread(
            target=lambda: found.append(self._look(fence)), name="seri-tree-digest", daemon=True
        )
        walker.start()

        def result() -> str:
            walker.join()
            # A walk that failed: a digest of its own (changed), never a stall.
            return found[0] if found else f"no-look:{time.time_ns()}"

        return result

    def _look(self, fence: int | None) -> str:
        with self._lock:
            self._looks += 1
            racy = time.time_ns() - RACY_NS
            seen: dict[str, tuple[StatKey, str]] = {}
            walked = self._walk(fence, racy, seen)
            if walked is None:
                return f"too-many-files:{self._looks}"
            parts, touched = walked
            self._known, self._counted = seen, len(seen)
            if touched:  # the check wrote under the walk: a digest no other look has
                return f"touched-during-check:{self._looks}:{time.time_ns()}"
            text = "\0".join(parts).encode("utf-8", "surrogateescape")
            return hashlib.sha256(text).hexdigest()

    def _walk(
        self, fence: int | None, racy: int, seen: dict[str, tuple[StatKey, str]]
    ) -> tuple[list[str], bool] | None:
        """Each file's path and content digest, directory by directory in name order, and
        whether anything was changed past ``fence``; None past ``max_files``. Caches each file
        read in ``seen`` (not one changed within ``racy``)."""
        parts: list[str] = []
        touched = False
        known = self._known
        root = str(self.root)
        pending = [""]
        while pending:
            relative = pending.pop()
            directory = os.path.join(root, relative) if relative else root
            try:
                with os.scandir(directory) as listing:
                    entries = sorted(listing, key=_BY_NAME)
                if fence is not None:  # an entry added, removed or renamed changes its directory
                    touched = touched or _past(fence, os.lstat(directory).st_ctime_ns)
            except FileNotFoundError:
                touched = touched or fence is not None
                continue
            except OSError:
                continue
            prefix = relative + "/" if relative else ""
            subdirectories = []
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED_DIRS:
                            subdirectories.append(prefix + entry.name)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    touched = touched or fence is not None
                    continue
                except OSError:
                    continue
                if len(seen) >= self._max_files:
                    return None
                path = prefix + entry.name
                key = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
                if _past(fence, info.st_ctime_ns):
                    touched, content, key = True, "", _NEVER
                elif (cached := known.get(path)) is not None and cached[0] == key:
                    content = cached[1]
                else:
                    try:
                        content, key = _content(entry.path, info.st_mode, key, fence)
                    except _Touched:
                        touched, content, key = True, "", _NEVER
                seen[path] = (key, content) if key[2] < racy else (_NEVER, content)
                parts.append(path)
                parts.append(content)
            pending.extend(reversed(subdirectories))
        return parts, touched


def _past(fence: int | None, changed: int) -> bool:
    """Whether a change time is (or, within the clock's grain, may be) past ``fence``: whole
    seconds are a coarse file system's (FAT, HFS+, ext3), which truncate to 1 s or 2 s."""
    if fence is None:
        return False
    slack = COARSE_SLACK_NS if changed % 1_000_000_000 == 0 else FINE_SLACK_NS
    return changed >= fence - slack


def _content(path: str, mode: int, key: StatKey, fence: int | None) -> tuple[str, StatKey]:
    """What a file holds, and the key to keep it under (one that never matches when the file
    moved while it was read)."""
    if stat.S_ISLNK(mode):
        try:
            return f"link:{os.readlink(path)}", key
        except OSError as exc:
            return _unreadable(exc, fence), key
    if not stat.S_ISREG(mode):  # a socket, a FIFO (which an open would wait on): what it is
        return f"special:{stat.S_IFMT(mode)}", key
    try:
        handle = os.open(path, _READ_FLAGS)
    except OSError as exc:
        return _unreadable(exc, fence), key
    try:
        digest = hashlib.sha256()
        while block := os.read(handle, 1 << 20):
            digest.update(block)
        after = os.fstat(handle)
    except OSError as exc:
        return _unreadable(exc, fence), key
    finally:
        os.close(handle)
    if (after.st_size, after.st_mtime_ns, after.st_ctime_ns, after.st_ino) != key:
        if fence is not None:
            raise _Touched  # rewritten or replaced while read
        key = _NEVER  # what was read stands for this look only
    return digest.hexdigest(), key


def _unreadable(exc: OSError, fence: int | None) -> str:
    if fence is not None and exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
        raise _Touched from None  # gone or replaced under the walk
    return f"unreadable:{exc.errno}"
