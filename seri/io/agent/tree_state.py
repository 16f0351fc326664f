"""A digest of a project's files, for the goal's stall rule: did anything change between two
checks?

By content, not by time: a test runner rewrites its caches (``.pytest_cache``,
``__pycache__``) on every run with the same bytes, and that must not count as a change. A file
is read again only when its size or modification time moved since the last look, so a
second look at an unchanged tree costs one ``stat`` a file. Version control's own
directories, virtual environments, installed packages and tools' caches are not looked into
(``SKIPPED_DIRS``: what a model's fix changes is the project's own files, and these can hold
tens of thousands); past ``MAX_FILES`` files the digest says so and counts as changed every
time, so a huge tree never makes a run stall by mistake.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

MAX_FILES = 50_000
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
    }
)


class TreeState:
    """Looks at one project's files, remembering what it read last time."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._known: dict[str, tuple[int, int, str]] = {}
        self._looks = 0

    @property
    def files_seen(self) -> int:
        """The files the last look saw."""
        return len(self._known)

    def digest(self) -> str:
        """The files' paths and contents as one hex digest."""
        self._looks += 1
        seen: dict[str, tuple[int, int, str]] = {}
        whole = hashlib.sha256()
        for path, size, mtime, regular in self._files():
            if len(seen) >= MAX_FILES:
                return f"too-many-files:{self._looks}"
            known = self._known.get(path)
            if known is not None and known[0] == size and known[1] == mtime:
                content = known[2]
            elif regular:
                content = _content_digest(os.path.join(self.root, path))
            else:  # a link, a socket, a FIFO (which an open would wait on): by what it is
                content = f"special:{size}:{mtime}"
            seen[path] = (size, mtime, content)
            whole.update(f"{path}\0{content}\0".encode("utf-8", "surrogateescape"))
        self._known = seen
        return whole.hexdigest()

    def _files(self) -> list[tuple[str, int, int, bool]]:
        found: list[tuple[str, int, int, bool]] = []
        pending = [""]
        while pending:
            relative = pending.pop()
            try:
                entries = list(os.scandir(os.path.join(self.root, relative)))
            except OSError:
                continue
            for entry in entries:
                name = os.path.join(relative, entry.name) if relative else entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name not in SKIPPED_DIRS:
                            pending.append(name)
                        continue
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                regular = stat.S_ISREG(info.st_mode)
                found.append((name, info.st_size, info.st_mtime_ns, regular))
                if len(found) > MAX_FILES:
                    return found
        found.sort()
        return found


def _content_digest(path: str) -> str:
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError as exc:
        return f"unreadable:{exc.errno}"
