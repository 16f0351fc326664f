"""The store: connection settings, write discipline, migrations under contention,
file modes, append cost, and refusing files that are not (or no longer) a seri db.

Everything here uses real SQLite files and real `seri` processes.
"""

from __future__ import annotations

import os
import stat
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from seri.io.session import conversations, session_table
from seri.io.session.legacy_import import import_legacy
from seri.io.session.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION
from seri.io.session.store import DB_NAME, Store, open_store
from seri.io.session.store_connection import BUSY_TIMEOUT_MS
from seri.io.session.store_errors import StoreError
from seri.pure.session.records import Message, ToolCall, assistant, tool_result, user
from tests.conftest import SERI, RunSeri, seri_env
from tests.legacy_support import copy_fixtures, sha256
from tests.store_writes import append_latest, insert_latest


def _pragma(conn: apsw.Connection, name: str) -> object:
    return conn.execute(f"PRAGMA {name}").fetchall()[0][0]


def user_version(conn: apsw.Connection) -> object:
    return _pragma(conn, "user_version")


@pytest.fixture
def store(seri_home: Path) -> Iterator[Store]:
    opened = open_store(seri_home)
    yield opened
    opened.close()


def _new_session(store: Store, session_id: str = "s1", project: str = "/p") -> str:
    session_table.create_session(
        store,
        session_id=session_id,
        project=project,
        now=1000.0,
        model="m",
        system_prompt="sys",
        prompt_hashes={},
    )
    return session_id


# --- S9: what every connection is --------------------------------------------------------


@pytest.mark.parametrize("readonly", [False, True])
def test_every_connection_is_wal_full_fk_busy_and_no_mmap(seri_home: Path, readonly: bool) -> None:
    open_store(seri_home).close()  # a read-only open needs the db to exist
    store = open_store(seri_home, readonly=readonly)
    try:
        conn = store.connection
        assert _pragma(conn, "journal_mode") == "wal"
        assert _pragma(conn, "synchronous") == 2  # FULL
        assert _pragma(conn, "foreign_keys") == 1
        busy = _pragma(conn, "busy_timeout")
        assert isinstance(busy, int)
        assert busy >= 5000
        assert _pragma(conn, "mmap_size") == 0
        assert _pragma(conn, "application_id") == APPLICATION_ID
        assert user_version(conn) == SCHEMA_VERSION
        assert conn.transaction_mode == "IMMEDIATE"
        version = tuple(int(p) for p in apsw.sqlite_lib_version().split("."))
        assert version >= (3, 51, 3)
    finally:
        store.close()


def test_an_sqlite_older_than_3_51_3_is_refused(seri_home: Path) -> None:
    """The version floor is checked when a connection is opened, not assumed."""
    script = (
        "import sys, apsw\n"
        "apsw.sqlite_lib_version = lambda: '3.51.2'\n"
        "from seri.io.session.store import open_store\n"
        "from seri.io.session.store_errors import StoreError\n"
        "try:\n"
        f"    open_store(__import__('pathlib').Path({str(seri_home)!r}))\n"
        "except StoreError as exc:\n"
        "    print(exc); sys.exit(3)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=30
    )
    assert result.returncode == 3, result.stderr
    assert "3.51.2 is too old" in result.stdout
    assert not (seri_home / DB_NAME).exists()


# --- every write is BEGIN IMMEDIATE ------------------------------------------------------


def test_every_write_path_runs_inside_begin_immediate(seri_home: Path) -> None:
    """Trace every statement on the connection while each write helper runs: every
    statement that changes the database sits inside a BEGIN IMMEDIATE transaction."""
    copy_fixtures(seri_home)
    store = open_store(seri_home)
    statements: list[str] = []

    def tracer(_cursor: apsw.Cursor, sql: str, _bindings: object) -> bool:
        statements.append(" ".join(sql.split()))
        return True

    store.connection.exec_trace = tracer
    try:
        _new_session(store)
        call = ToolCall("c1", "bash", "{}")
        append_latest(
            store, "s1", [user("hi"), assistant("", (call,)), tool_result(call, "ok")], 1001.0
        )
        session_table.record_usage(store, "s1", 123)
        session_table.set_turns(store, "s1", 2)
        session_table.set_max_turns(store, "s1", 9)
        report = import_legacy(store, seri_home, announce=False)
        assert len(report.imported) == 3
    finally:
        store.close()

    writes = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")
    in_immediate = False
    outside: list[str] = []
    for sql in statements:
        upper = sql.upper()
        if upper.startswith("BEGIN"):
            assert upper == "BEGIN IMMEDIATE", f"a transaction started with {sql!r}"
            in_immediate = True
        elif upper.startswith(("COMMIT", "ROLLBACK", "END")) and "TO " not in upper:
            in_immediate = False
        elif upper.startswith(writes) and not in_immediate:
            outside.append(sql)
    assert statements, "the tracer saw nothing"
    assert not outside, f"writes outside BEGIN IMMEDIATE: {outside}"


def test_deferred_read_then_write_fails_at_once_while_ours_waits(seri_home: Path) -> None:
    """The regression this discipline prevents (reliability anchors §1.3).

    DEFERRED: A reads, B commits, A's write fails with BusyError at once, whatever the
    busy timeout. IMMEDIATE (Store.write): B has to wait for A, and then both succeed.
    """
    first = open_store(seri_home)
    second = open_store(seri_home)
    try:
        _new_session(first)
        a = first.connection

        # The trap, with a plain deferred transaction on the same connection settings.
        a.execute("BEGIN DEFERRED")
        count = a.execute("SELECT count(*) FROM messages").fetchall()[0][0]
        with second.write() as conn:
            insert_latest(conn, "s1", [user("from b")], 1.0)
        started = time.monotonic()
        with pytest.raises(apsw.BusyError):
            a.execute(
                "INSERT INTO messages(session_id, seq, role, body, chars, created)"
                " VALUES ('s1', 99, 'user', '{}', 0, 0)"
            )
        assert time.monotonic() - started < 1.0 < BUSY_TIMEOUT_MS / 1000
        a.execute("ROLLBACK")
        assert count == 0

        # Ours: A holds the write lock across its read and its write; B waits, no error.
        b_done = threading.Event()
        b_error: list[BaseException] = []

        def writer_b() -> None:
            try:
                append_latest(second, "s1", [user("b again")], 2.0)
            except BaseException as exc:
                b_error.append(exc)
            finally:
                b_done.set()

        with first.write() as conn:
            before = conn.execute("SELECT count(*) FROM messages").fetchall()[0][0]
            thread = threading.Thread(target=writer_b)
            thread.start()
            time.sleep(0.4)
            assert not b_done.is_set(), "B wrote while A held the write transaction"
            insert_latest(conn, "s1", [user(f"a saw {before}")], 3.0)
        thread.join(timeout=15)
        assert b_done.is_set()
        assert not b_error, b_error
        texts = [m.text for m in conversations.load_messages(first, "s1")]
        assert texts == ["from b", "a saw 1", "b again"]
    finally:
        first.close()
        second.close()


def test_nested_write_is_a_savepoint_and_a_failed_one_rolls_back_alone(store: Store) -> None:
    _new_session(store)

    def failing_inner() -> None:
        with store.write() as conn:
            insert_latest(conn, "s1", [user("inner")], 2.0)
            raise ZeroDivisionError

    with store.write():
        append_latest(store, "s1", [user("outer")], 1.0)
        with pytest.raises(ZeroDivisionError):
            failing_inner()
    assert [m.text for m in conversations.load_messages(store, "s1")] == ["outer"]
    with pytest.raises(RuntimeError, match="inside a read snapshot"), store.snapshot():
        append_latest(store, "s1", [user("no")], 3.0)
    assert store.connection.get_autocommit()


# --- migrations under contention ---------------------------------------------------------


def _start_many(home: Path, cwd: Path, count: int = 8) -> list[subprocess.CompletedProcess[str]]:
    env = seri_env(home)
    procs = [
        subprocess.Popen(
            [SERI, "sessions", "--all"],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        results.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    return results


def _schema(home: Path) -> list[tuple[str, str]]:
    conn = apsw.Connection(str(home / DB_NAME), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT type, name FROM sqlite_schema ORDER BY type, name").fetchall()
        return [(str(kind), str(name)) for kind, name in rows]
    finally:
        conn.close()


def _expected_schema(tmp_path: Path) -> list[tuple[str, str]]:
    reference = tmp_path / "reference"
    open_store(reference).close()
    return _schema(reference)


def _assert_all_fine(results: list[subprocess.CompletedProcess[str]]) -> None:
    for result in results:
        assert result.returncode == 0, result.stderr
        assert "locked" not in result.stderr.lower(), result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.parametrize("round_", range(3))
def test_eight_processes_migrate_an_empty_profile_exactly_once(
    seri_home: Path, project: Path, tmp_path: Path, round_: int
) -> None:
    """Run three times: the race it guards against (a process reading the new db's
    identity across another's first commit) does not show on every run."""
    results = _start_many(seri_home, project)
    _assert_all_fine(results)
    conn = apsw.Connection(str(seri_home / DB_NAME), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert user_version(conn) == SCHEMA_VERSION
        assert _pragma(conn, "application_id") == APPLICATION_ID
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    # A migration applied twice would have failed on CREATE TABLE; applied zero times
    # the tables would be missing. The schema is exactly the one a single open makes.
    assert _schema(seri_home) == _expected_schema(tmp_path)


def _make_db_at(home: Path, version: int) -> None:
    """A profile as an older seri left it: migrations 1..version applied."""
    home.mkdir(mode=0o700, parents=True)
    db = home / DB_NAME
    os.close(os.open(db, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = apsw.Connection(str(db))
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        for number in range(version):
            conn.execute(MIGRATIONS[number])
        conn.execute(f"PRAGMA user_version={version}")
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_identity_is_read_in_one_snapshot_across_another_process_first_migration(
    seri_home: Path,
) -> None:
    """Deterministic form of a race the eight processes above can hit.

    B opens a new, empty WAL database and reads its application id (0). Right then,
    A (a second real connection) runs the first migration. If B read the table count
    in a second transaction it would see 'no application id, but tables' and call
    the database foreign. apsw's connection hook lets A step in at that exact point.
    """
    _make_db_at(seri_home, 0)
    conn = apsw.Connection(str(seri_home / DB_NAME))
    conn.execute("PRAGMA application_id=0")
    conn.close()
    interleaved: list[Store] = []

    def tracer(_cursor: apsw.Cursor, sql: str, _bindings: object) -> bool:
        if "FROM sqlite_schema" in sql and not interleaved:
            interleaved.append(open_store(seri_home))  # A migrates and commits here
        return True

    def hook(connection: apsw.Connection) -> None:
        apsw.connection_hooks.remove(hook)
        connection.exec_trace = tracer

    apsw.connection_hooks.append(hook)
    try:
        store_b = open_store(seri_home)
    finally:
        if hook in apsw.connection_hooks:
            apsw.connection_hooks.remove(hook)
    try:
        assert interleaved, "A never stepped in"
        assert user_version(store_b.connection) == SCHEMA_VERSION
    finally:
        store_b.close()
        interleaved[0].close()


def test_eight_processes_migrate_a_profile_one_version_behind_exactly_once(
    seri_home: Path, project: Path, tmp_path: Path
) -> None:
    _make_db_at(seri_home, SCHEMA_VERSION - 1)
    results = _start_many(seri_home, project)
    _assert_all_fine(results)
    assert _schema(seri_home) == _expected_schema(tmp_path)
    conn = apsw.Connection(str(seri_home / DB_NAME), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        assert user_version(conn) == SCHEMA_VERSION
    finally:
        conn.close()


def test_eight_processes_on_a_current_profile_change_nothing(
    seri_home: Path, project: Path, tmp_path: Path
) -> None:
    _make_db_at(seri_home, SCHEMA_VERSION)
    before = sha256(seri_home / DB_NAME)
    _assert_all_fine(_start_many(seri_home, project))
    # No migration ran: not one byte of the database changed.
    assert sha256(seri_home / DB_NAME) == before
    assert _schema(seri_home) == _expected_schema(tmp_path)


def test_a_db_from_a_newer_seri_is_refused_untouched(seri_home: Path, run_seri: RunSeri) -> None:
    _make_db_at(seri_home, SCHEMA_VERSION)
    conn = apsw.Connection(str(seri_home / DB_NAME))
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    before = sha256(seri_home / DB_NAME)
    result = run_seri("sessions", "--all")
    assert result.returncode == 2
    assert "newer seri" in result.stderr
    assert str(seri_home / DB_NAME) in result.stderr
    assert sha256(seri_home / DB_NAME) == before


# --- T6: file modes ----------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_profile_is_0700_and_db_wal_shm_are_0600_under_umask_022(
    seri_home: Path, project: Path
) -> None:
    result = subprocess.run(
        [SERI, "sessions", "--all"],
        cwd=project,
        env=seri_env(seri_home),
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert result.returncode == 0, result.stderr
    assert _mode(seri_home) == 0o700
    assert _mode(seri_home / DB_NAME) == 0o600
    # -wal and -shm exist while a connection is open: keep one open and look.
    old = os.umask(0o022)
    try:
        store = open_store(seri_home)
        try:
            session_table.create_session(
                store,
                session_id="x",
                project="/p",
                now=1.0,
                model="",
                system_prompt="",
                prompt_hashes={},
            )
            for suffix in ("-wal", "-shm"):
                assert _mode(Path(f"{seri_home / DB_NAME}{suffix}")) == 0o600, suffix
        finally:
            store.close()
        # A fresh profile made by the API under the same umask is private too.
        other = seri_home.parent / "api-profile"
        open_store(other).close()
        assert _mode(other) == 0o700
        assert _mode(other / DB_NAME) == 0o600
    finally:
        os.umask(old)


def test_a_world_readable_db_is_tightened_with_a_warning(
    seri_home: Path, run_seri: RunSeri
) -> None:
    assert run_seri("sessions").returncode == 0
    db = seri_home / DB_NAME
    holder = open_store(seri_home)  # keeps -wal and -shm in existence
    try:
        wal, shm = Path(f"{db}-wal"), Path(f"{db}-shm")
        for path in (db, wal, shm):
            os.chmod(path, 0o644)
        result = run_seri("sessions", "--all")
        assert result.returncode == 0, result.stderr
        assert f"tightened {db} from 644 to 600" in result.stderr
        for path in (db, wal, shm):
            assert _mode(path) == 0o600, path
    finally:
        holder.close()
    # Once tightened, nothing more is said.
    assert "tightened" not in run_seri("sessions", "--all").stderr


# --- append cost is flat -----------------------------------------------------------------


def _append_seconds(store: Store, session_id: str, n: int) -> float:
    message = Message(role="user", text=f"message {n} " + "x" * 200)
    started = time.perf_counter()
    append_latest(store, session_id, [message], 2000.0 + n)
    return time.perf_counter() - started


def test_appending_costs_the_same_at_message_10_and_at_100000(store: Store, tmp_path: Path) -> None:
    """Median append time at message 10 and at message 100,000.

    Three sessions are appended to in turn, so that noise from the machine (other
    tests, fsync latency) falls on all alike: a 10-message session in a database of
    its own, a 10-message session beside the big one, and the 100,000-message one.
    """
    fresh = open_store(tmp_path / "small-profile")
    try:
        _new_session(fresh, "alone")
        append_latest(fresh, "alone", [user(f"m{n}") for n in range(10)], 1.0)
        _new_session(store, "short")
        append_latest(store, "short", [user(f"m{n}") for n in range(10)], 1.0)
        _new_session(store, "long")
        # Grow one history to 100,000 messages quickly: one transaction.
        call = ToolCall("c", "read_file", '{"path": "README.md"}')
        pair = (assistant("", (call,)), tool_result(call, "y" * 300))
        with store.write() as conn:
            insert_latest(conn, "long", [pair[n % 2] for n in range(100_000)], 1.5)
        assert session_table.load_state(store, "long").session.messages == 100_000
        store.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")

        alone: list[float] = []
        short: list[float] = []
        long: list[float] = []
        for n in range(50):
            alone.append(_append_seconds(fresh, "alone", n))
            short.append(_append_seconds(store, "short", n))
            long.append(_append_seconds(store, "long", n))
    finally:
        fresh.close()
    at_10, beside, at_100k = (statistics.median(t) for t in (alone, short, long))
    shown = f"at 10: {at_10 * 1e3:.2f} ms, beside: {beside * 1e3:.2f}, at 100k: {at_100k * 1e3:.2f}"
    assert at_100k < 3 * at_10, shown
    assert at_100k < 3 * beside, shown


# --- B5: a file that is not (or no longer) a seri database -------------------------------


def _foreign_db(db: Path, journal: str) -> None:
    conn = apsw.Connection(str(db))
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes(body) VALUES ('someone else''s data')")
    conn.close()


def _seri_db_with_sessions(home: Path) -> Path:
    copy_fixtures(home)
    store = open_store(home)
    import_legacy(store, home, announce=False)
    store.close()
    return home / DB_NAME


def _corrupt_sessions_page(home: Path) -> None:
    db = _seri_db_with_sessions(home)
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'sessions'").fetchall()
    page_size = _pragma(conn, "page_size")
    conn.close()
    assert isinstance(page_size, int)
    offset = (int(root[0][0]) - 1) * page_size
    data = bytearray(db.read_bytes())
    data[offset] = 0x00  # not a b-tree page type
    db.write_bytes(bytes(data))
    # Read-write, so that closing it leaves no -wal/-shm behind (it writes nothing).
    check = apsw.Connection(str(db))
    try:
        assert check.execute("PRAGMA integrity_check").fetchall() != [("ok",)]
    except apsw.CorruptError:
        pass
    finally:
        check.close()


def _truncated(home: Path) -> None:
    db = _seri_db_with_sessions(home)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])


def _random_bytes(home: Path) -> None:
    (home / DB_NAME).write_bytes(os.urandom(4096 * 3))


def _foreign_rollback(home: Path) -> None:
    _foreign_db(home / DB_NAME, "delete")


def _foreign_wal(home: Path) -> None:
    _foreign_db(home / DB_NAME, "wal")


def _other_application_id(home: Path) -> None:
    conn = apsw.Connection(str(home / DB_NAME))
    conn.execute("PRAGMA application_id=1234")
    conn.close()


ALL_COMMANDS = (("sessions", "--all"), ("sessions", "show", "a1b2"), ("sessions", "import"))
# Damage inside a seri db is found where seri reads: listing and showing read the
# sessions table; `sessions import` only reads the import ledger, which is intact.
READERS_OF_SESSIONS = ALL_COMMANDS[:2]

# kind: (make it, what the message says, whether the file is ours, commands to try)
BAD_FILES = {
    "random-bytes": (_random_bytes, "damaged or is not a seri database", False, ALL_COMMANDS),
    "other-app-rollback-journal": (
        _foreign_rollback,
        "is not a seri database",
        False,
        ALL_COMMANDS,
    ),
    "other-app-wal": (_foreign_wal, "is not a seri database", False, ALL_COMMANDS),
    "other-application-id": (_other_application_id, "is not a seri database", False, ALL_COMMANDS),
    "truncated-seri-db": (_truncated, "damaged or is not a seri database", True, ALL_COMMANDS),
    "seri-db-failing-integrity": (
        _corrupt_sessions_page,
        "damaged or is not a seri database",
        True,
        READERS_OF_SESSIONS,
    ),
}


@pytest.mark.parametrize("kind", sorted(BAD_FILES))
def test_a_file_that_is_not_a_usable_seri_db_is_never_written(
    kind: str, seri_home: Path, run_seri: RunSeri
) -> None:
    make, expected, ours, commands = BAD_FILES[kind]
    seri_home.mkdir(mode=0o700, exist_ok=True)
    make(seri_home)
    db = seri_home / DB_NAME
    os.chmod(db, 0o644)
    # Legacy files waiting to be imported: seri has every reason to want to write.
    sessions = copy_fixtures(seri_home)
    (sessions / "zz-new.jsonl").write_bytes(
        (sessions / "a1b2c3d4-hello.jsonl").read_bytes().replace(b"a1b2c3d4-hello", b"zz-new")
    )
    before = sha256(db)
    listing = sorted(os.listdir(seri_home))

    for args in commands:
        result = run_seri(*args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert "Traceback" not in result.stderr
        assert lines, args
        assert expected in lines[-1], result.stderr
        assert str(db) in lines[-1]
        assert "backup" in lines[-1]
        if not ours:
            assert len(lines) == 1, result.stderr

    assert sha256(db) == before
    assert sorted(os.listdir(seri_home)) == listing  # no -wal/-shm left, nothing recreated
    if not ours:
        # A file seri refused is not even chmod-ed: it is not ours to change.
        assert _mode(db) == 0o644


def test_open_store_raises_store_error_not_apsw_error(seri_home: Path) -> None:
    seri_home.mkdir(mode=0o700)
    _random_bytes(seri_home)
    with pytest.raises(StoreError, match="backup"):
        open_store(seri_home)
