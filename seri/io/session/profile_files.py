"""The profile directory and the privacy of the database file in it.

The profile is ``$SERI_HOME``, else ``~/.seri``, created 0700 (a directory seri creates is
its own to lock down). A database file readable by others (with its -wal and -shm) is
tightened to 0600, with a warning, once it has proved to be seri's
(``seri.io.session.store.open_store``, which creates a new one 0600).
"""

from __future__ import annotations

import os
import stat
import sys

from seri.io.session.store_errors import StoreError, store_error

# `seri sessions` opens the store first thing: pathlib and typing stay out of its start-up
# (``seri.io.session.store`` says why). (mypy and ruff read `if TYPE_CHECKING:` by name.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path


def profile_root(environ: Mapping[str, str] | None = None) -> Path:
    from pathlib import Path

    return Path(profile_dir(environ))


def profile_dir(environ: Mapping[str, str] | None = None) -> str:
    """The profile root as a string: $SERI_HOME, else ~/.seri."""
    env = os.environ if environ is None else environ
    home = env.get("SERI_HOME")
    return home if home else os.path.join(os.path.expanduser("~"), ".seri")


def ensure_profile(root: Path) -> Path:
    """Create the profile directory 0700 (a directory we create is ours to lock down)."""
    ensure_dir(os.fspath(root))
    return root


def ensure_dir(root: str) -> None:
    try:
        if not os.path.exists(root):
            os.makedirs(root, mode=0o700, exist_ok=True)
            os.chmod(root, 0o700)
        elif not os.path.isdir(root):
            raise StoreError(f"{root} is not a directory; set SERI_HOME to a directory for seri")
    except OSError as exc:
        message = f"cannot create the profile directory {root}: {exc.strerror}"
        raise store_error(message, exc) from exc


def tighten(db: str) -> None:
    """A db (and its -wal/-shm) readable by others is made 0600, with a warning.

    chmod opens no file descriptor, so it cannot disturb SQLite's locks.
    """
    for path in (db, f"{db}-wal", f"{db}-shm"):
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            continue
        except OSError:
            continue
        if not mode & 0o077:
            continue
        try:
            os.chmod(path, 0o600)
        except OSError as exc:
            print(
                f"seri: warning: {path} is readable by others ({mode:o}) and could not be "
                f"made 600: {exc.strerror}",
                file=sys.stderr,
            )
        else:
            print(f"seri: warning: tightened {path} from {mode:o} to 600", file=sys.stderr)
