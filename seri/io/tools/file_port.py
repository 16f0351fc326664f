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


def held_bytes(path: Path, max_bytes: int, port: FilePort | None) -> bytes | None:
    """What ``path`` (resolved, confined) holds now, as a checkpoint keeps it: the editor's
    buffer when a port reads (a file not on the disk has none), else the disk's bytes.
    None: no such file. A port's failure is an OSError, as the disk's would be."""
    from seri.io.tools.files import snapshot_file

    if port is None or not path.is_file():
        return snapshot_file(path, max_bytes)
    try:
        data = port.read_text(path).encode("utf-8", "surrogatepass")
    except FilePortError as exc:
        raise OSError(errno.EIO, f"the editor did not read it: {exc}") from exc
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, "too large")
    return data
