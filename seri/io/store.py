"""The one SQLite store, ``$SERI_HOME/seri.db``, opened through apsw.

Every connection is WAL, ``synchronous=FULL``, foreign keys on, a 10 s busy
timeout and no mmap; every write is a ``BEGIN IMMEDIATE`` transaction, because a
deferred read-then-write fails at once (without waiting) whenever another
process committed in between. A file that is not ours, or is damaged, is never
written to, recreated or "cleaned up": we stop and say how to keep a backup.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time

import apsw

from seri.io.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from seri.pure.errors import EXIT_UNFINISHED, SeriError

# `seri sessions` opens the store first thing: pathlib (with re, urllib and ipaddress
# behind it) and typing would be a fifth of its start-up, so paths here are strings and
# annotations stay annotations. (mypy and ruff read `if TYPE_CHECKING:` by name.)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping
    from os import PathLike
    from pathlib import Path
    from typing import Any

BUSY_TIMEOUT_MS = 10_000
MIN_SQLITE = (3, 51, 3)
DB_NAME = "seri.db"


class StoreError(SeriError):
    """The database cannot be used as it is; the message says what to do."""


class StorageFailed(StoreError):
    """The disk or the lock failed this time (full, an I/O error, locked too long).

    Nothing is wrong with the profile or with what was asked, so this is not an input error
    (exit 2): the command did not finish (exit 1), as when the same fault strikes mid-turn.
    """

    exit_code = EXIT_UNFINISHED


# OS errors that say the disk failed this time, not that the path or the profile is wrong.
_TRANSIENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def store_error(message: str, exc: BaseException) -> StoreError:
    """The StoreError for ``exc``: StorageFailed when the disk or the lock failed."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, apsw.NotADBError | apsw.CorruptError):
            return StoreError(message)
        if isinstance(current, apsw.FullError | apsw.IOError | apsw.BusyError):
            return StorageFailed(message)
        if isinstance(current, OSError) and current.errno in _TRANSIENT_ERRNOS:
            return StorageFailed(message)
        current = current.__cause__ or current.__context__
    return StoreError(message)


def _sqlite_version() -> tuple[int, ...]:
    return tuple(int(part) for part in apsw.sqlite_lib_version().split("."))


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
    _ensure_dir(os.fspath(root))
    return root


def _ensure_dir(root: str) -> None:
    try:
        if not os.path.exists(root):
            os.makedirs(root, mode=0o700, exist_ok=True)
            os.chmod(root, 0o700)
        elif not os.path.isdir(root):
            raise StoreError(f"{root} is not a directory; set SERI_HOME to a directory for seri")
    except OSError as exc:
        message = f"cannot create the profile directory {root}: {exc.strerror}"
        raise store_error(message, exc) from exc


def _precreate_private(db: str) -> bool:
    """Create the db file 0600 before SQLite opens it: -wal and -shm copy its mode.

    Returns whether the file is new. An existing file is left alone here: it is
    tightened only once it has proved to be ours (``_tighten``).
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


def _tighten(db: str) -> None:
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
            self._rollback(conn)
            raise
        else:
            try:
                conn.execute("COMMIT")
            except BaseException:
                self._rollback(conn)
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

    @staticmethod
    def _rollback(conn: apsw.Connection) -> None:
        # After SQLITE_FULL/IOERR SQLite may have rolled back already; a failing
        # ROLLBACK must not hide the error that caused it.
        if not conn.get_autocommit():
            with contextlib.suppress(apsw.Error):
                conn.execute("ROLLBACK")

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


def open_store(root: str | PathLike[str] | None = None, *, readonly: bool = False) -> Store:
    """Open (creating on first use) the profile's database, migrated to the current schema.

    The order matters. The file is identified (``application_id``, a read that
    writes nothing) before anything can write to it: switching a foreign
    rollback-journal database to WAL would already change its header. Only a
    file that proved to be ours (or is new and empty) is tightened to 0600,
    switched to WAL and migrated.
    """
    if _sqlite_version() < MIN_SQLITE:
        raise StoreError(
            f"SQLite {apsw.sqlite_lib_version()} is too old (3.51.3+ fixes a WAL corruption bug); "
            "reinstall seri so that apsw brings a current SQLite"
        )
    # One canonical path: two spellings of one file must not look like two databases.
    root_dir = os.path.realpath(profile_dir() if root is None else root)
    _ensure_dir(root_dir)
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
            _check_identity(connection, db, readonly=readonly)
        except (apsw.CantOpenError, apsw.ReadOnlyError):
            if not readonly or os.access(root_dir, os.W_OK):
                raise
            # A read-only filesystem: SQLite cannot create the -shm index a WAL reader
            # needs. Nothing can write the file there either, so it is read as immutable.
            connection.close()
            connection = _open_immutable(db)
            immutable = True
            _check_identity(connection, db, readonly=True)
        _tighten(db)
        store = Store(connection, db)
        _configure(connection, readonly=readonly, immutable=immutable)
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


def check_connection(conn: apsw.Connection, *, immutable: bool = False) -> None:
    """Assert what every connection must be (S9); raises StoreError if one is not.

    An immutable connection (a read-only filesystem) reads no WAL and takes no lock, so its
    journal mode is not WAL; everything else holds for it too.
    """
    version = _sqlite_version()
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


def _configure(conn: apsw.Connection, *, readonly: bool, immutable: bool = False) -> None:
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


def _check_identity(conn: apsw.Connection, db: str, *, readonly: bool = False) -> None:
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
        Store._rollback(conn)
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
