"""Where the file tools read and write when it is not the disk: an editor's buffers.

An ACP client that offers ``fs/read_text_file`` and ``fs/write_text_file`` holds the text a
person sees (an unsaved buffer included); the tools read and write through this port then,
after every rule of seri's own (the project boundary, protected paths, size limits) has
been applied. The tools know nothing of ACP: ``seri.runtime.acp.acp_files`` fills the port.
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Protocol


class FilePortError(Exception):
    """The port could not read or write (its own words, for the tool's failure)."""


class AnsweredWithError(FilePortError):
    """The editor answered, with an error: for a file the disk has not either, how a client
    says it holds no such file (ACP names no error for that; clients differ)."""


class FilePort(Protocol):
    # Whether reads, and writes, go through the port (a client may offer only one of them).
    reads: bool
    writes: bool

    def read_text(self, path: Path) -> str:
        """The text of ``path`` (absolute, already confined); raises FilePortError."""
        ...

    def write_text(self, path: Path, text: str) -> None:
        """Replace the text of ``path`` (absolute, confined, not protected)."""
        ...


class ReadOnce:
    """``port`` as one tool call sees it: each file is asked of the editor once.

    A write's before (the diff), its checkpoint, the edit's starting text and its after all
    read one state of the file, and what a write sent is what the file holds after it: the
    editor is not asked again for what seri already knows. A failure is kept too, so a
    client that is silent costs one wait, not one per look. Made for one call and dropped
    after it (a person asked in between may have changed the buffer: ``ToolHost.one_call``).
    """

    def __init__(self, port: FilePort) -> None:
        self.port = port
        self.reads = port.reads
        self.writes = port.writes
        self._seen: dict[Path, str | FilePortError] = {}

    def read_text(self, path: Path) -> str:
        seen = self._seen.get(path)
        if seen is None:
            try:
                seen = self.port.read_text(path)
            except FilePortError as exc:
                seen = exc
            self._seen[path] = seen
        if isinstance(seen, FilePortError):
            raise seen
        return seen

    def write_text(self, path: Path, text: str) -> None:
        self._seen.pop(path, None)  # a failed write leaves the buffer unknown: ask again
        self.port.write_text(path, text)
        self._seen[path] = text

    def forget(self) -> None:
        """Ask again from now on (a process ran that may have changed the files)."""
        self._seen.clear()


def held_bytes(path: Path, max_bytes: int, port: FilePort | None) -> bytes | None:
    """What ``path`` (resolved, confined) holds now, as a checkpoint keeps it: the editor's
    buffer when a port reads (a file only the editor has included), else the disk's bytes.
    None: no such file, on the disk or in the editor. A port's failure is an OSError, as
    the disk's would be."""
    from seri.io.tools.files import snapshot_file

    if port is None or (path.exists() and not path.is_file()):
        return snapshot_file(path, max_bytes)  # a directory or a FIFO is what the disk says
    try:
        data = port.read_text(path).encode("utf-8", "surrogatepass")
    except AnsweredWithError as exc:
        if not path.exists():
            return None  # a new file: the editor has no buffer of it and the disk no file
        raise OSError(errno.EIO, f"the editor did not read it: {exc}") from exc
    except FilePortError as exc:
        raise OSError(errno.EIO, f"the editor did not read it: {exc}") from exc
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, "too large")
    return data
