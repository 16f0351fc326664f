"""The one SQLite store, ``$SERI_HOME/seri.db``, opened through apsw.

Every connection is WAL, ``synchronous=FULL``, foreign keys on, a 10 s busy
timeout and no mmap (``seri.io.session.store_connection``); every write is a ``BEGIN
IMMEDIATE`` transaction, because a deferred read-then-write fails at once (without
waiting) whenever another process committed in between. A file that is not ours, or is
damaged, is never written to, recreated or "cleaned up": we stop and say how to keep a
backup. The profile directory and the file's mode are ``seri.io.session.profile_files``'s, the
errors ``seri.io.session.store_errors``'.
"""

from __future__ import annotations

import contextlib
import os
import sys

import apsw

from seri.io.session.profile_files import ensure_dir, profile_dir, tighten
from seri.io.session.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from seri.io.session.store_connection import (
    BUSY_TIMEOUT_MS,
    MIN_SQLITE,
    check_identity,
    configure,
    rollback,
    sqlite_version,
    user_version,
)
from seri.io.session.store_errors import StoreError, store_error

# `seri sessions` opens the store first thing: pathlib (with re, urllib and ipaddress
# behind it) and typing would be a fifth of its start-up, so paths here are strings and
# annotations stay annotations. (mypy and ruff read `if TYPE_CHECKING:` by name.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from os import PathLike
    from pathlib import Path

DB_NAME = "seri.db"


def describe_sqlite_error(exc: BaseException, db: str | PathLike[str]) -> str | None:
    """Name what went wrong, walking the chain: after a full disk apsw reports
    'cannot rollback' while the real FullError sits in ``__context__``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        message = _describe_one(current, db)
        if message:
            return message
        current = current.__cause__ or current.__context__
    return None


def _describe_one(exc: BaseException, db: str | PathLike[str]) -> str | None:
    if isinstance(exc, apsw.FullError):
        return f"disk full ({db}): free some space and run the command again; nothing was lost"
    if isinstance(exc, apsw.NotADBError | apsw.CorruptError):
        return (
            f"{db} is damaged or is not a seri database; seri will not write to it. "
            f"Keep a copy (with its -wal file) as a backup, then try `sqlite3 {db} .recover` "
            "or point SERI_HOME at another directory"
        )
    if isinstance(exc, apsw.ReadOnlyError | apsw.CantOpenError):
        return f"cannot write {db}: the file or its directory is read-only or missing"
    if isinstance(exc, apsw.IOError):
        return f"I/O error on {db}: check the disk; the last transaction was rolled back"
    if isinstance(exc, apsw.BusyError):
        return f"{db} stayed locked by another seri process for {BUSY_TIMEOUT_MS // 1000} s"
    return None


class Store:
    """An open connection plus the transaction discipline around it."""

    def __init__(self, connection: apsw.Connection, path: str | PathLike[str]) -> None:
        self.connection = connection
        self._path = os.fspath(path)
        self._write_depth = 0

    @property
    def path(self) -> Path:
        """The database file (a Path, made when asked: listing never needs one)."""
        from pathlib import Path

        return Path(self._path)

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: committed whole, or rolled back whole.

        Nested inside another ``write()`` of this store it is a savepoint, so a
        helper that writes can be called from inside a larger transaction.
        """
        conn = self.connection
        if self._write_depth:
            yield from self._savepoint(conn)
            return
        if not conn.get_autocommit():
            # A write inside a deferred read transaction is the upgrade that
            # fails with BusyError whenever another process committed meanwhile.
            raise RuntimeError("Store.write() inside a read snapshot: start the write first")
        conn.execute("BEGIN IMMEDIATE")
        self._write_depth = 1
        try:
            yield conn
        except BaseException:
            rollback(conn)
            raise
        else:
            try:
                conn.execute("COMMIT")
            except BaseException:
                rollback(conn)
                raise
        finally:
            self._write_depth = 0

    def _savepoint(self, conn: apsw.Connection) -> Iterator[apsw.Connection]:
        name = f"seri_write_{self._write_depth}"
        conn.execute(f"SAVEPOINT {name}")
        self._write_depth += 1
        try:
            yield conn
        except BaseException:
            if not conn.get_autocommit():
                with contextlib.suppress(apsw.Error):
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
            raise
        else:
            conn.execute(f"RELEASE {name}")
        finally:
            self._write_depth -= 1

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[apsw.Connection]:
        """A read transaction: several queries that see one point in time."""
        conn = self.connection
        if not conn.get_autocommit():
            # Already inside a transaction (a write, or an outer snapshot): it is one already.
            yield conn
            return
        conn.execute("BEGIN DEFERRED")
        try:
            yield conn
        finally:
            if not conn.get_autocommit():
                conn.execute("COMMIT")

    def close(self) -> None:
        self.connection.close()


def _precreate_private(db: str) -> bool:
    """Create the db file 0600 before SQLite opens it: -wal and -shm copy its mode.

    Returns whether the file is new. An existing file is left alone here: it is
    tightened only once it has proved to be ours (``tighten``).
    """
    try:
        fd = os.open(db, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        return False
    except OSError as exc:
        raise store_error(f"cannot create {db}: {exc.strerror}", exc) from exc
    try:
        # Whatever the umask: 0600, never less (a 0400 db could not be written).
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return True


def open_store(root: str | PathLike[str] | None = None, *, readonly: bool = False) -> Store:
    """Open (creating on first use) the profile's database, migrated to the current schema.

    The order matters. The file is identified (``application_id``, a read that
    writes nothing) before anything can write to it: switching a foreign
    rollback-journal database to WAL would already change its header. Only a
    file that proved to be ours (or is new and empty) is tightened to 0600,
    switched to WAL and migrated.
    """
    if sqlite_version() < MIN_SQLITE:
        raise StoreError(
            f"SQLite {apsw.sqlite_lib_version()} is too old (3.51.3+ fixes a WAL corruption bug); "
            "reinstall seri so that apsw brings a current SQLite"
        )
    # One canonical path: two spellings of one file must not look like two databases.
    root_dir = os.path.realpath(profile_dir() if root is None else root)
    ensure_dir(root_dir)
    db = os.path.join(root_dir, DB_NAME)
    if readonly:
        if not os.path.exists(db):
            raise StoreError(f"{db} does not exist yet: run a seri command that writes first")
        flags = apsw.SQLITE_OPEN_READONLY
    else:
        _precreate_private(db)
        flags = apsw.SQLITE_OPEN_READWRITE
    connection: apsw.Connection | None = None
    immutable = False
    try:
        connection = apsw.Connection(str(db), flags=flags)
        connection.set_busy_timeout(BUSY_TIMEOUT_MS)
        try:
            check_identity(connection, db, readonly=readonly)
        except (apsw.CantOpenError, apsw.ReadOnlyError):
            if not readonly or os.access(root_dir, os.W_OK):
                raise
            # A read-only filesystem: SQLite cannot create the -shm index a WAL reader
            # needs. Nothing can write the file there either, so it is read as immutable.
            connection.close()
            connection = _open_immutable(db)
            immutable = True
            check_identity(connection, db, readonly=True)
        tighten(db)
        store = Store(connection, db)
        configure(connection, readonly=readonly, immutable=immutable)
        if not readonly:
            _migrate(store)
    except BaseException as exc:
        if connection is not None:
            with contextlib.suppress(apsw.Error):
                connection.close()
        if isinstance(exc, apsw.Error):
            message = describe_sqlite_error(exc, db) or f"{db}: {exc}"
            raise store_error(message, exc) from exc
        raise
    return store


def _open_immutable(db: str) -> apsw.Connection:
    """A read-only connection to a database on a read-only filesystem (``immutable=1``)."""
    from urllib.parse import quote

    wal = f"{db}-wal"
    with contextlib.suppress(OSError):
        if os.stat(wal).st_size:
            print(
                f"seri: warning: {db} is on a read-only filesystem; what is still only in "
                f"{wal} cannot be read",
                file=sys.stderr,
            )
    uri = f"file:{quote(db)}?immutable=1"
    connection = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    connection.set_busy_timeout(BUSY_TIMEOUT_MS)
    return connection


def _migrate(store: Store) -> None:
    conn = store.connection
    current = user_version(conn)
    if current > SCHEMA_VERSION:
        _too_new(store.path, current)
    if current == SCHEMA_VERSION:
        return
    with store.write():
        # Re-read inside the write lock: another process may have just migrated.
        version = user_version(conn)
        if version > SCHEMA_VERSION:
            _too_new(store.path, version)
        if version == SCHEMA_VERSION:
            return
        for number in range(version, SCHEMA_VERSION):
            conn.execute(MIGRATIONS[number])
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")


def _too_new(db: str | PathLike[str], version: int) -> None:
    raise StoreError(
        f"{db} was written by a newer seri (schema {version}, this one knows "
        f"{SCHEMA_VERSION}); upgrade seri"
    )
