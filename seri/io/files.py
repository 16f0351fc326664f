"""Paths confined to the project, and writes that never leave a torn file.

Confinement compares resolved paths: ``realpath`` on both the project root and
the candidate (so every symlink, ``..`` and ``~`` is followed to where it
really leads), then ``os.path.commonpath``. A string-prefix test would let
``/srv/proj-evil`` pass for ``/srv/proj``, and a test on the unresolved path
would let ``notes.txt -> /etc/passwd`` through.

Between the check and the use, a directory could be swapped for a symlink.
Reads therefore open with ``O_NOFOLLOW`` and check where the descriptor really
points; writes go to a temp file in the checked directory, which is then
renamed over the target with ``os.replace``: a rename never follows a symlink,
and a full disk leaves the old file whole rather than truncated.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from seri.pure.permissions import protected_paths

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255


class PathRefusedError(ValueError):
    """A path the tools will not touch; the message names where it resolved to."""

    def __init__(self, message: str, resolved: str = "") -> None:
        super().__init__(message)
        self.resolved = resolved


def project_root(project: Path) -> Path:
    """The project directory as a real path (``/tmp`` on macOS is ``/private/tmp``)."""
    return Path(os.path.realpath(project))


def resolve_in_project(project: Path, raw: str) -> Path:
    """Resolve ``raw`` (relative to ``project``) and insist it stays inside.

    Returns the real path, symlinks followed; a link that points inside the
    project is fine and means its target. Raises PathRefusedError otherwise.
    """
    if "\x00" in raw:
        raise PathRefusedError(f"path {raw!r} contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS or any(
        len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in raw.split("/")
    ):
        raise PathRefusedError(f"path {raw[:80]!r}… is too long")
    if not raw.strip():
        raise PathRefusedError("the path is empty")
    root = project_root(project)
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    resolved = os.path.realpath(os.path.join(root, expanded))
    if not is_within(root, resolved):
        raise PathRefusedError(
            f"path {raw!r} resolves to {resolved}, which is outside the project {root}",
            resolved,
        )
    return Path(resolved)


def is_within(root: Path | str, path: Path | str) -> bool:
    """Whether ``path`` is ``root`` or below it; both must already be real paths."""
    return os.path.commonpath([str(root), str(path)]) == str(root)


def relative_name(root: Path, path: Path) -> str:
    """How the model should see a resolved path: relative, with ``/``."""
    rel = os.path.relpath(path, root)
    return "." if rel == "." else rel.replace(os.sep, "/")


def default_protected(profile_dir: Path, home: Path | None = None) -> tuple[Path, ...]:
    """Paths no tool may write: seri's profile, shell start-up files, ``~/.ssh``.

    Both the given and the resolved form of each are listed, so the check holds
    whether or not the profile directory is reached through a symlink.
    """
    home = Path.home() if home is None else home
    listed = protected_paths(str(profile_dir), str(home))
    both = {Path(p) for p in listed} | {Path(os.path.realpath(p)) for p in listed}
    return tuple(sorted(both))


def refuse_protected(root: Path, path: Path, protected: Iterable[Path], raw: str = "") -> None:
    """Raise PathRefusedError if writing ``path`` (resolved from ``raw``) is never allowed.

    The permission policy already denies these; this is the second lock, so a
    caller that skips the policy (an allow-all mode, a bug) still cannot write
    a git hook or seri's own config. The raw form is checked too, in case
    ``.git`` is itself a symlink.
    """
    rel = relative_name(root, path)
    for name in (rel, os.path.normpath(raw) if raw else ""):
        for part in name.split(os.sep):
            if part.lower() in {".git", ".ssh"}:
                raise PathRefusedError(
                    f"writing {rel} is never allowed: it is inside {part}/", str(path)
                )
    for guarded in protected:
        if is_within(guarded, path):
            raise PathRefusedError(
                f"writing {path} is never allowed: it is protected ({guarded})", str(path)
            )


def open_confined(root: Path, path: Path, flags: int) -> int:
    """Open a resolved path without following a last-moment symlink.

    ``O_NONBLOCK`` keeps a FIFO from hanging the open; callers check the file
    type with ``fstat`` before reading.
    """
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    real = _descriptor_path(fd)
    if real is not None and not is_within(root, real):
        os.close(fd)
        raise PathRefusedError(
            f"{path} changed while being opened and now leads to {real}, "
            f"outside the project {root}",
            real,
        )
    return fd


def atomic_write(root: Path, path: Path, data: bytes) -> bool:
    """Write ``data`` to the resolved ``path`` all or nothing; True if it was created.

    Missing parent directories are made. An existing file keeps its mode.
    """
    parent = path.parent
    parent.mkdir(parents=True, exist_ok=True)
    # A directory on the way may have been replaced by a symlink since the check.
    real_parent = os.path.realpath(parent)
    if real_parent != str(parent) or not is_within(root, real_parent):
        raise PathRefusedError(
            f"{parent} changed while being written and now leads to {real_parent}", real_parent
        )
    mode = _existing_mode(path)
    tmp = parent / f".seri-{secrets.token_hex(6)}.tmp"
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o666 if mode is None else 0o600,
    )
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(parent)
    return mode is None


def snapshot_file(path: Path) -> bytes | None:
    """The current bytes of ``path`` (a resolved path), or None if there is no file.

    Used for checkpoints before a write: None means "did not exist", so
    rewinding removes the file. A directory raises IsADirectoryError.
    """
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def iter_lines(f: BinaryIO, max_bytes: int) -> Iterator[tuple[bytes, int]]:
    """Lines of a binary file as (first ``max_bytes`` bytes, full length in bytes).

    Memory stays bounded even for a file that is one 2-million-character line:
    the rest of an over-long line is read in pieces and only counted.
    """
    while True:
        line = f.readline(max_bytes)
        if not line:
            return
        length = len(line)
        if len(line) == max_bytes and not line.endswith(b"\n"):
            while True:
                more = f.readline(max_bytes)
                length += len(more)
                if not more or more.endswith(b"\n"):
                    break
        yield line, length


def _existing_mode(path: Path) -> int | None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{path} is a directory")
    if stat.S_ISLNK(st.st_mode):
        # Resolution removed every symlink; one here appeared after the check.
        raise PathRefusedError(f"{path} became a symlink while being written", str(path))
    return stat.S_IMODE(st.st_mode)


def _descriptor_path(fd: int) -> str | None:
    """Where an open descriptor really points, where the system can tell us."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _fsync_directory(directory: Path) -> None:
    # The rename is only durable once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
