"""Paths confined to the project, and writes that never leave a torn file.

Confinement compares resolved paths: ``realpath`` on both the project root and
the candidate (so every symlink, ``..`` and ``~`` is followed to where it
really leads), then ``os.path.commonpath``. A string-prefix test would let
``/srv/proj-evil`` pass for ``/srv/proj``, and a test on the unresolved path
would let ``notes.txt -> /etc/passwd`` through.

Between the check and the use, a directory could be swapped for a symlink.
Reads therefore open with ``O_NOFOLLOW`` and check where the descriptor really
points; writes walk from the project root to the parent directory one component
at a time with ``O_NOFOLLOW`` and work through that directory's descriptor: a
temp file there, then renamed over the target with ``os.replace``. A rename
never follows a symlink, and a full disk leaves the old file whole rather than
truncated.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from seri.pure.permissions.protected_paths import protected_dir, protected_paths

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


def directory_identity(path: Path) -> str:
    """``device:inode`` of a directory, or '' if it is not there: tells a directory that was
    moved away and replaced by another of the same name from the one itself."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_dev}:{st.st_ino}" if stat.S_ISDIR(st.st_mode) else ""


def resolve_in_project(project: Path, raw: str) -> Path:
    """Resolve ``raw`` (relative to ``project``) and insist it stays inside.

    Returns the real path, symlinks followed; a link that points inside the
    project is fine and means its target. Raises PathRefusedError otherwise.
    """
    if "\x00" in raw:
        raise PathRefusedError(f"path {raw!r} contains a NUL byte")
    try:
        raw.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise PathRefusedError(f"path {raw!r} is not valid Unicode (a lone surrogate)") from None
    if len(raw) > MAX_PATH_CHARS or any(
        len(part.encode("utf-8", "surrogateescape")) > MAX_NAME_BYTES for part in raw.split("/")
    ):
        raise PathRefusedError(f"path {raw[:80]!r}… is too long")
    if not raw.strip():
        raise PathRefusedError("the path is empty")
    root = project_root(project)
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    try:
        resolved = os.path.realpath(os.path.join(root, expanded))
    except OSError as exc:
        # A link on the way was replaced while being followed (realpath read it as a
        # link, then it was gone): what the path means cannot be known right now.
        raise PathRefusedError(
            f"path {raw!r} changed while being resolved ({exc.strerror or exc}); try again"
        ) from exc
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
        found = protected_dir(name, os.sep)
        if found is not None:
            raise PathRefusedError(f"writing {rel} is never allowed: it is {found[0]}", str(path))
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

    Everything happens relative to a descriptor on the parent directory, reached from the
    root one component at a time without following a link: a directory on the way that is
    swapped for a symlink after the path was checked makes the write fail, instead of
    creating the temp file (or the directories) wherever the link leads.
    """
    parent = _open_directory_within(root, path.parent)
    name = path.name
    temporary = f".seri-{os.urandom(6).hex()}.tmp"
    try:
        mode = _existing_mode(parent, name, path)
        fd = os.open(
            temporary,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o666 if mode is None else 0o600,
            dir_fd=parent,
        )
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                if mode is not None:
                    os.fchmod(out.fileno(), mode)
                os.fsync(out.fileno())
            os.replace(temporary, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=parent)
            raise
        # The rename is only durable once the directory entry is on disk.
        with contextlib.suppress(OSError):
            os.fsync(parent)
    finally:
        os.close(parent)
    return mode is None


def remove_within(root: Path, path: Path) -> None:
    """Delete the file ``path`` below ``root``, never through a link swapped in on the way.

    FileNotFoundError when it (or a directory on the way) is not there.
    """
    parent = _open_directory_within(root, path.parent, create=False)
    try:
        os.unlink(path.name, dir_fd=parent)
    finally:
        os.close(parent)


def _open_directory_within(root: Path, directory: Path, *, create: bool = True) -> int:
    """A descriptor on ``directory`` (below ``root``), made where missing (with ``create``),
    reached without following a link."""
    rel = os.path.relpath(directory, root)
    if rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        raise PathRefusedError(f"{directory} is outside the project {root}", str(directory))
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
    fd = os.open(root, flags)
    try:
        for part in [] if rel == "." else rel.split(os.sep):
            try:
                child = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = _open_component(part, fd, directory)
            except (NotADirectoryError, OSError) as exc:
                if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                raise _changed(directory, part) from exc
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_component(part: str, fd: int, directory: Path) -> int:
    try:
        return os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        raise _changed(directory, part) from exc


def _changed(directory: Path, part: str) -> PathRefusedError:
    return PathRefusedError(
        f"{directory} changed while being written: {part} is no longer a directory of the "
        "project (a link or a file took its place)",
        str(directory),
    )


class NotAFileError(OSError):
    """A FIFO, a device or a socket where a regular file was expected: never read, never
    written (reading a FIFO blocks, reading /dev/zero never ends)."""


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def refuse_non_regular(path: Path) -> None:
    """Raise NotAFileError if ``path`` (resolved) exists and is not a regular file or a
    directory; nothing is opened, so a FIFO cannot block and a device cannot be read."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise NotAFileError(errno.EINVAL, file_kind(mode), str(path))


def snapshot_file(path: Path, max_bytes: int | None = None) -> bytes | None:
    """The current bytes of ``path`` (a resolved path), or None if there is no file.

    Used for checkpoints before a write: None means "did not exist", so rewinding removes
    the file. A directory raises IsADirectoryError; a FIFO, device or socket NotAFileError
    (opened without blocking, never read); a file over ``max_bytes`` raises EFBIG.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise NotAFileError(errno.EINVAL, file_kind(st.st_mode), str(path))
        if max_bytes is not None and st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{st.st_size} bytes, over {max_bytes}", str(path))
        data = f.read() if max_bytes is None else f.read(max_bytes + 1)
    if max_bytes is not None and len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"over {max_bytes} bytes", str(path))
    return data


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


# How much of a spill file iter_pieces decodes at a time.
_PIECE_READ_BYTES = 1 << 16


def iter_pieces(f: BinaryIO, piece_chars: int) -> Iterator[str]:
    """A UTF-8 file's lines (without their ``\n``), each line longer than ``piece_chars``
    characters given as its pieces of ``piece_chars`` (the last one shorter): the lines as
    ``seri.pure.compaction.result_cap.pieces_before`` counts them. Undecodable bytes become U+FFFD;
    memory stays bounded however long a line is."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    pending = ""
    while True:
        block = f.read(_PIECE_READ_BYTES)
        pending += decoder.decode(block, final=not block)
        start = 0
        while True:
            newline = pending.find("\n", start, start + piece_chars + 1)
            if newline >= 0:
                yield pending[start:newline]
                start = newline + 1
            elif len(pending) - start > piece_chars or (not block and start < len(pending)):
                yield pending[start : start + piece_chars]
                start += piece_chars
            else:
                break
        pending = pending[start:]
        if not block:
            return


def _existing_mode(parent: int, name: str, path: Path) -> int | None:
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
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
