"""A project file's text as a person is shown it, before and after a write (the diff of
an approval, the +N −M of a tool line)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from seri.io.tools.file_port import FilePort, FilePortError
from seri.io.tools.files import PathRefusedError, open_confined, project_root
from seri.io.tools.files import resolve_in_project as confine

# The largest file whose change is shown to a person (a diff, +N −M).
SHOW_MAX_BYTES = 4 * 1024 * 1024


def current_text(project: Path, raw: str, port: FilePort | None = None) -> str | None:
    """A file's text as it is now, to show a person what a write changes.

    None when there is no such regular file in the project, or it is too large to show
    (``SHOW_MAX_BYTES``); read like read_file reads (no symlink swapped in at the last
    moment, no hanging on a FIFO).
    """
    root = project_root(project)
    if port is not None:
        return _port_text(root, raw, port)
    try:
        path = confine(root, raw)
        fd = open_confined(root, path, os.O_RDONLY)
    except (PathRefusedError, OSError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > SHOW_MAX_BYTES:
            return None
        data = os.read(fd, SHOW_MAX_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def _port_text(root: Path, raw: str, port: FilePort) -> str | None:
    """The editor's text of a project file (its unsaved buffer), under the same limits."""
    try:
        path = confine(root, raw)
        if path.is_dir():
            return None
        text = port.read_text(path)
    except (PathRefusedError, FilePortError, OSError):
        return None
    return text if len(text) <= SHOW_MAX_BYTES else None
