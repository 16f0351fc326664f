"""What every command opens first: the profile root, the store, the current project."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from seri.io.legacy_import import ImportReport, import_legacy
from seri.io.store import Store, open_store, profile_root


@attrs.frozen
class Profile:
    root: Path
    store: Store
    # What this run's legacy import did (nothing, most of the time).
    legacy: ImportReport = attrs.field(factory=ImportReport)


def open_profile(*, readonly: bool = False) -> Profile:
    """Open the store; on first use (and whenever new files appear) import legacy sessions."""
    root = profile_root()
    store = open_store(root, readonly=readonly)
    if readonly:
        return Profile(root, store)
    return Profile(root, store, import_legacy(store, root))


def current_project() -> str:
    """The project is the working directory, resolved (symlinks and all)."""
    return os.path.realpath(os.getcwd())
