"""A rewind of a session whose tools went through an editor's buffers (``seri acp`` with a
client that offers fs/read_text_file and fs/write_text_file): what a file holds now is the
buffer's text, and a checkpoint goes back into the buffer, as the write it undoes went.

Nothing falls back to the disk when the editor errs, leaves or is silent: the rewind stops
there and says which files were already put back.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path

from seri.io.tools.file_port import FilePort, FilePortError, held_bytes
from seri.io.tools.files import atomic_write
from seri.pure.inputs.errors import SeriError


def held_now(root: Path, rel: str, files: FilePort) -> bytes | None:
    """``rel``'s text as the editor holds it (None: neither it nor the disk has the file)."""
    try:
        return held_bytes(root / rel, sys.maxsize, files)
    except IsADirectoryError:
        return None
    except OSError as exc:
        why = exc.strerror if exc.errno == errno.EIO and exc.strerror else str(exc)
        raise SeriError(
            f"{rel}: {why}, so seri cannot tell whether it changed since its checkpoint. "
            "Nothing was changed."
        ) from exc


def put_back(root: Path, rel: str, content: bytes, files: FilePort, restored: list[str]) -> None:
    """Write a checkpoint's ``content`` into the editor's buffer of ``rel``. Bytes that are
    not text (a checkpoint a terminal session took of a binary file) no editor buffer can
    hold: they go back onto the disk."""
    try:
        text = content.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        atomic_write(root, root / rel, content)
        return
    try:
        files.write_text(root / rel, text)
    except FilePortError as exc:
        done = ", ".join(restored) or "none"
        raise SeriError(
            f"the editor did not take {rel} back: {exc}. Files put back before it: {done}; "
            "nothing else was changed (the conversation neither)."
        ) from exc
