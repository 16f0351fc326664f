"""Spill files: whole texts too long for the context window, kept for the model to page through.

A tool result over the window's cap enters the history cut, and the shrink ladder replaces
payloads by markers; both name a file here that holds the whole (already redacted) text, which
the model can read with ``read_file`` a page at a time. Files are named by their content, so a
text kept twice (a resumed session cut the same way again) is one file. They age out with the
recordings (``trajectory.retention_days``).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from pathlib import Path

SPILL_DIR = "spill"


def keep_text(spill_dir: Path, text: str) -> str:
    """Write ``text`` to a 0600 file in ``spill_dir`` and return its path ("" on failure).

    A spill is a convenience: failing to write one never fails the turn, the marker then says
    the rest was not kept.
    """
    data = text.encode("utf-8", "surrogatepass")
    path = spill_path(spill_dir, text)
    name = path.name
    try:
        spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if path.is_file() and not path.is_symlink() and path.stat().st_size == len(data):
            os.utime(path)  # in use again: it ages from now
            return str(path)
        temporary = spill_dir / f".{name}.{secrets.token_hex(4)}.tmp"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                temporary.unlink()
            raise
    except OSError:
        return ""
    return str(path)


def spill_path(spill_dir: Path, text: str) -> Path:
    """Where ``keep_text`` keeps ``text`` (named by its content); nothing is written."""
    data = text.encode("utf-8", "surrogatepass")
    return spill_dir / f"result-{hashlib.sha256(data).hexdigest()[:24]}.txt"
