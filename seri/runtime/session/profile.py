"""What every command opens first: the profile root, the store, the current project.

Kept light (no attrs, no record machinery): every command, `seri sessions` first of
all, pays for what this module imports.
"""

from __future__ import annotations

import os
import sys

from seri.io.session.profile_files import profile_dir
from seri.io.session.session_index import legacy_dir_seen, pending_legacy_names, remember_legacy_dir
from seri.io.session.store import Store, open_store

# No pathlib or typing at import (see seri.io.session.store): `seri sessions` pays for both.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

    from seri.io.session.legacy_import import ImportReport

LEGACY_DIR = "sessions"


class Profile:
    """The profile root, its open store, and what this run's legacy import did (None when
    there was nothing to import)."""

    __slots__ = ("home", "legacy", "store")

    def __init__(
        self, root: str | os.PathLike[str], store: Store, legacy: ImportReport | None = None
    ) -> None:
        self.home = os.fspath(root)
        self.store = store
        self.legacy = legacy

    @property
    def root(self) -> Path:
        from pathlib import Path

        return Path(self.home)


def open_profile(*, readonly: bool = False) -> Profile:
    """Open the store; on first use (and whenever new files appear) import legacy sessions."""
    root = profile_dir()
    store = open_store(root, readonly=readonly)
    if readonly or not _legacy_files_pending(store, root):
        return Profile(root, store)
    from pathlib import Path

    from seri.io.session.legacy_import import import_legacy

    return Profile(root, store, import_legacy(store, Path(root)))


def _legacy_files_pending(store: Store, root: str) -> bool:
    """One stat when the directory has not changed since everything in it was imported;
    else one listing and one query. The importer loads only when there is work for it."""
    directory = os.path.join(root, LEGACY_DIR)
    try:
        info = os.stat(directory)
        stamp = f"{info.st_ino}:{info.st_mtime_ns}"
        if stamp == legacy_dir_seen(store):
            return False
        names = [name for name in os.listdir(directory) if name.endswith(".jsonl")]
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        print(f"seri: import: cannot list {directory} ({exc.strerror})", file=sys.stderr)
        return False
    if pending_legacy_names(store, names):
        return True
    remember_legacy_dir(store, stamp)
    return False


def current_project() -> str:
    """The project is the working directory, resolved (symlinks and all)."""
    return os.path.realpath(os.getcwd())
