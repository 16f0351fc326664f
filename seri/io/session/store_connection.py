"""What every connection to the store is, and how a database proves to be seri's.

Every connection is WAL, ``synchronous=FULL``, foreign keys on, a 10 s busy timeout and no
mmap (``check_connection`` asserts it). A file is identified by its ``application_id`` before
anything writes to it (``seri.io.session.store.open_store`` then migrates it, and refuses one a
newer seri wrote).
"""

from __future__ import annotations

import contextlib
import time

import apsw

from seri.io.session.schema import APPLICATION_ID
from seri.io.session.store_errors import StoreError

# `seri sessions` opens the store first thing: pathlib and typing stay out of its start-up
# (``seri.io.session.store`` says why). (mypy and ruff read `if TYPE_CHECKING:` by name.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


BUSY_TIMEOUT_MS = 10_000
MIN_SQLITE = (3, 51, 3)


def sqlite_version() -> tuple[int, ...]:
    return tuple(int(part) for part in apsw.sqlite_lib_version().split("."))


def rollback(conn: apsw.Connection) -> None:
    # After SQLITE_FULL/IOERR SQLite may have rolled back already; a failing
    # ROLLBACK must not hide the error that caused it.
    if not conn.get_autocommit():
        with contextlib.suppress(apsw.Error):
            conn.execute("ROLLBACK")


def check_connection(conn: apsw.Connection, *, immutable: bool = False) -> None:
    """Assert what every connection must be (S9); raises StoreError if one is not.

    An immutable connection (a read-only filesystem) reads no WAL and takes no lock, so its
    journal mode is not WAL; everything else holds for it too.
    """
    version = sqlite_version()
    mode = _pragma(conn, "journal_mode")
    checks = {
        "SQLite version": (version >= MIN_SQLITE, apsw.sqlite_lib_version()),
        "journal_mode": (immutable or mode == "wal", mode),
        "synchronous": (_pragma(conn, "synchronous") == 2, _pragma(conn, "synchronous")),
        "foreign_keys": (_pragma(conn, "foreign_keys") == 1, _pragma(conn, "foreign_keys")),
        "busy_timeout": (
            int(_pragma(conn, "busy_timeout")) >= 5000,
            _pragma(conn, "busy_timeout"),
        ),
        "mmap_size": (_pragma(conn, "mmap_size") == 0, _pragma(conn, "mmap_size")),
    }
    wrong = [f"{name}={value}" for name, (ok, value) in checks.items() if not ok]
    if wrong:
        raise StoreError("the database connection is misconfigured: " + ", ".join(wrong))


def _pragma(conn: apsw.Connection, name: str) -> Any:
    rows = conn.execute(f"PRAGMA {name}").fetchall()
    return rows[0][0] if rows else None


def configure(conn: apsw.Connection, *, readonly: bool, immutable: bool = False) -> None:
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    # A safety net for anyone who uses `with conn:` instead of Store.write().
    conn.transaction_mode = "IMMEDIATE"
    if not readonly:
        _with_busy_retry(lambda: _enter_wal(conn))
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA mmap_size=0")
    # Deleted rows (compacted or pruned history) are zeroed, not left readable.
    conn.execute("PRAGMA secure_delete=ON")
    check_connection(conn, immutable=immutable)


def _enter_wal(conn: apsw.Connection) -> None:
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchall()[0][0]
    if str(mode).lower() != "wal":
        # SQLite answers with the old mode when it could not switch just now.
        raise apsw.BusyError(f"journal_mode is still {mode}")


def _with_busy_retry(action: Callable[[], object]) -> None:
    """Switching to WAL needs a moment alone with the file; retry briefly when many start."""
    delay = 0.01
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            action()
        except apsw.BusyError:
            if time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
        else:
            return


def check_identity(conn: apsw.Connection, db: str, *, readonly: bool = False) -> None:
    """Ours (our application_id), or new and empty; anything else is refused untouched.

    Both facts are read in one read transaction: read one after the other, another
    process's first migration could commit in between, and a new database would
    look like 'no application id, but tables', that is like someone else's.
    """
    conn.execute("BEGIN DEFERRED")
    try:
        app_id = _pragma(conn, "application_id")
        tables = conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()[0][0]
    except BaseException:
        rollback(conn)
        raise
    conn.execute("COMMIT")
    if app_id == APPLICATION_ID:
        return
    if app_id != 0 or tables:
        raise StoreError(
            f"{db} is not a seri database; seri will not write to it. Move it aside "
            "(keep it as a backup) or point SERI_HOME at another directory"
        )
    if readonly:
        raise StoreError(f"{db} holds no seri data yet: run a seri command that writes first")


def user_version(conn: apsw.Connection) -> int:
    return int(_pragma(conn, "user_version"))
