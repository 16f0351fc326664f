"""The one SQLite store, ``$SERI_HOME/seri.db``, opened through apsw.

Every connection is WAL, ``synchronous=FULL``, foreign keys on, a 10 s busy
timeout and no mmap; every write is a ``BEGIN IMMEDIATE`` transaction, because a
deferred read-then-write fails at once (without waiting) whenever another
process committed in between. A file that is not ours, or is damaged, is never
written to, recreated or "cleaned up": we stop and say how to keep a backup.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import apsw

from seri.io.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from seri.pure.errors import SeriError

BUSY_TIMEOUT_MS = 10_000
MIN_SQLITE = (3, 51, 3)
DB_NAME = "seri.db"


class StoreError(SeriError):
    """The database cannot be used as it is; the message says what to do."""


def _sqlite_version() -> tuple[int, ...]:
    return tuple(int(part) for part in apsw.sqlite_lib_version().split("."))


def profile_root(environ: Mapping[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    home = env.get("SERI_HOME")
    return Path(home) if home else Path.home() / ".seri"


def ensure_profile(root: Path) -> Path:
    """Create the profile directory 0700 (a directory we create is ours to lock down)."""
    if not root.exists():
        root.mkdir(parents=True, mode=0o700, exist_ok=True)
        os.chmod(root, 0o700)
    elif not root.is_dir():
        raise StoreError(f"{root} is not a directory; set SERI_HOME to a directory for seri")
    return root


def _precreate_private(db: Path) -> None:
    """Create the db file 0600 before SQLite opens it: -wal and -shm copy its mode."""
    try:
        fd = os.open(db, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        mode = stat.S_IMODE(os.stat(db).st_mode)
        if mode & 0o077:
            os.chmod(db, 0o600)
            print(f"seri: tightened {db} from {mode:o} to 600", file=sys.stderr)
        return
    os.close(fd)


def describe_sqlite_error(exc: BaseException, db: Path) -> str | None:
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


def _describe_one(exc: BaseException, db: Path) -> str | None:
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

    def __init__(self, connection: apsw.Connection, path: Path) -> None:
        self.connection = connection
        self.path = path

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: committed whole, or rolled back whole."""
        conn = self.connection
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            # After SQLITE_FULL/IOERR SQLite may have rolled back already.
            if not conn.get_autocommit():
                conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[apsw.Connection]:
        """A read transaction: several queries that see one point in time."""
        conn = self.connection
        conn.execute("BEGIN")
        try:
            yield conn
        finally:
            if not conn.get_autocommit():
                conn.execute("COMMIT")

    def close(self) -> None:
        self.connection.close()


def open_store(root: Path | None = None, *, readonly: bool = False) -> Store:
    """Open (creating on first use) the profile's database, migrated to the current schema."""
    if _sqlite_version() < MIN_SQLITE:
        raise StoreError(
            f"SQLite {apsw.sqlite_lib_version()} is too old (3.51.3+ fixes a WAL corruption bug); "
            "reinstall seri so that apsw brings a current SQLite"
        )
    root = ensure_profile(profile_root() if root is None else root)
    db = root / DB_NAME
    if readonly:
        if not db.exists():
            raise StoreError(f"{db} does not exist yet: run a seri command that writes first")
        flags = apsw.SQLITE_OPEN_READONLY
    else:
        _precreate_private(db)
        flags = apsw.SQLITE_OPEN_READWRITE
    try:
        connection = apsw.Connection(str(db), flags=flags)
        store = Store(connection, db)
        _configure(connection, readonly=readonly)
        _check_identity(connection, db)
        if not readonly:
            _migrate(store)
    except apsw.Error as exc:
        raise StoreError(describe_sqlite_error(exc, db) or f"{db}: {exc}") from exc
    return store


def _configure(conn: apsw.Connection, *, readonly: bool) -> None:
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    if not readonly:
        _with_busy_retry(lambda: conn.execute("PRAGMA journal_mode=WAL").fetchall())
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA mmap_size=0")
    # Deleted rows (compacted or pruned history) are zeroed, not left readable.
    conn.execute("PRAGMA secure_delete=ON")


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


def _check_identity(conn: apsw.Connection, db: Path) -> None:
    app_id = conn.execute("PRAGMA application_id").fetchall()[0][0]
    if app_id == APPLICATION_ID:
        return
    tables = conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()[0][0]
    if app_id != 0 or tables:
        raise StoreError(
            f"{db} is not a seri database; seri will not write to it. Move it aside "
            "(keep it as a backup) or point SERI_HOME at another directory"
        )


def _migrate(store: Store) -> None:
    conn = store.connection
    current = conn.execute("PRAGMA user_version").fetchall()[0][0]
    if current > SCHEMA_VERSION:
        raise StoreError(
            f"{store.path} was written by a newer seri (schema {current}, this one knows "
            f"{SCHEMA_VERSION}); upgrade seri"
        )
    if current == SCHEMA_VERSION:
        return
    with store.write():
        # Re-read inside the write lock: another process may have just migrated.
        version = conn.execute("PRAGMA user_version").fetchall()[0][0]
        for number in range(version, SCHEMA_VERSION):
            conn.execute(MIGRATIONS[number])
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
