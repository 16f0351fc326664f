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
import re
import stat
from pathlib import Path

SPILL_DIR = "spill"
# The names seri gives spill files: a cut or elided result (named by its content) and a bash
# command's whole output. read_file reads nothing else outside the project.
SPILL_NAME = re.compile(r"result-[0-9a-f]{24}\.txt|bash-[0-9a-f]{16}\.log")


def ready_spill_dir(spill_dir: Path) -> bool:
    """Create ``spill_dir`` (0700) if it is missing; whether it is a real directory of ours.

    A symlink in its place (to ``/``, to ``$HOME``) would make every file below its target
    a "spill file" that read_file may read from any project: it is never written to or
    read from.
    """
    with contextlib.suppress(OSError):
        spill_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    return sound_spill_dir(spill_dir)


def sound_spill_dir(spill_dir: Path) -> bool:
    """Whether ``spill_dir`` is a directory (not a symlink to one) owned by this user."""
    try:
        found = os.lstat(spill_dir)
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.geteuid()


def spilled_file(raw: str, spill_dir: Path) -> Path | None:
    """The spill file the absolute path ``raw`` names, or None.

    Only a file with a spill file's name, directly in a sound spill directory (a path to it
    through symlinks is fine: the two directories' real paths are compared), and not itself
    a symlink.
    """
    named = Path(os.path.expanduser(raw))
    if not SPILL_NAME.fullmatch(named.name) or not sound_spill_dir(spill_dir):
        return None
    real_dir = os.path.realpath(spill_dir)
    if os.path.realpath(named.parent) != real_dir:
        return None
    found = Path(real_dir) / named.name
    try:
        is_file = stat.S_ISREG(os.lstat(found).st_mode)
    except OSError:
        return None
    return found if is_file else None


def keep_text(spill_dir: Path, text: str) -> str:
    """Write ``text`` to a 0600 file in ``spill_dir`` and return its path ("" on failure).

    A spill is a convenience: failing to write one never fails the turn, the marker then says
    the rest was not kept.
    """
    data = text.encode("utf-8", "surrogatepass")
    path = spill_path(spill_dir, text)
    name = path.name
    if not ready_spill_dir(spill_dir):
        return ""
    try:
        if path.is_file() and not path.is_symlink() and path.stat().st_size == len(data):
            os.utime(path)  # in use again: it ages from now
            return str(path)
        temporary = spill_dir / f".{name}.{os.urandom(4).hex()}.tmp"
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
