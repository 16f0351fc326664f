"""What every command opens first: the profile root, the store, the current project.

Kept light (no attrs, no record machinery): every command, `seri sessions` first of
all, pays for what this module imports.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from seri.io.session_index import pending_legacy_names
from seri.io.store import Store, open_store, profile_root

if TYPE_CHECKING:
    from seri.io.legacy_import import ImportReport

LEGACY_DIR = "sessions"


class Profile(NamedTuple):
    root: Path
    store: Store
    # What this run's legacy import did; None when there was nothing to import.
    legacy: ImportReport | None = None


def open_profile(*, readonly: bool = False) -> Profile:
    """Open the store; on first use (and whenever new files appear) import legacy sessions."""
    root = profile_root()
    store = open_store(root, readonly=readonly)
    if readonly or not _legacy_files_pending(store, root):
        return Profile(root, store)
    from seri.io.legacy_import import import_legacy

    return Profile(root, store, import_legacy(store, root))


def _legacy_files_pending(store: Store, root: Path) -> bool:
    """One listing and one query; the importer loads only when there is work for it."""
    try:
        names = [name for name in os.listdir(root / LEGACY_DIR) if name.endswith(".jsonl")]
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        print(f"seri: import: cannot list {root / LEGACY_DIR} ({exc.strerror})", file=sys.stderr)
        return False
    return bool(pending_legacy_names(store, names))


def current_project() -> str:
    """The project is the working directory, resolved (symlinks and all)."""
    return os.path.realpath(os.getcwd())
