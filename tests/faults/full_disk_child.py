"""Disk-full and I/O-error sweeps through seri's own store code, SQLite's way (testing.html).

    python full_disk_child.py write|write-persist|sync HOME SESSION_ID

A VFS registered as the default in this process (it has to be: a VFS only exists where the
database is opened) makes the Nth write (``xWrite``) raise ``FullError``, or the Nth sync
(``xSync``) raise ``IOError``, counted from the start of one turn's transaction. That
transaction is the one seri's interpreter runs for a turn: ``Store.write()`` (BEGIN IMMEDIATE), the
messages through ``conversations.insert_messages``, the counters, and the buffered trajectory
events through ``Recorder.flush_into``.

N is swept from 1 upward until the transaction commits. After every failure this process
checks, and prints as one JSON line:

* that seri describes the error as disk full / an I/O error naming seri.db
  (``describe_sqlite_error`` walks the chain: apsw may raise "cannot rollback" with the
  FullError in ``__context__``);
* that the connection is usable: no transaction left open, and the next read works;
* through a second, plain connection on the default ``unix`` VFS: integrity_check is ok and
  the session holds exactly the messages it held before (rolled back whole).

``write`` fails one write then lets the rest through (the space comes back at once);
``write-persist`` fails every write from the Nth on until the sweep step ends, then lets
writes through again ("once space is back") and writes the turn once more on the same store,
without reopening anything; ``sync`` fails the Nth sync.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import apsw

from scripts.bench.data import synthetic_header
from seri.io.session import conversations, session_table
from seri.io.session.store import describe_sqlite_error, open_store
from seri.io.trajectories.recorder import Recorder
from seri.pure.session.records import Message, ToolCall
from seri.pure.trajectories.events import ModelCall
from seri.pure.trajectories.redaction import Redactor


class Fault:
    mode = ""
    at = 0
    count = 0
    armed = False
    fired = False

    @classmethod
    def arm(cls, mode: str, at: int) -> None:
        cls.mode, cls.at, cls.count, cls.armed, cls.fired = mode, at, 0, True, False

    @classmethod
    def check(cls, kind: str) -> None:
        if not cls.armed or not cls.mode.startswith(kind):
            return
        cls.count += 1
        if cls.count == cls.at or (cls.mode == "write-persist" and cls.count > cls.at):
            cls.fired = True
            if kind == "write":
                raise apsw.FullError("injected: no space left on device")
            raise apsw.IOError("injected: input/output error")


class FaultFile(apsw.VFSFile):
    def xWrite(self, data: bytes, offset: int) -> None:
        Fault.check("write")
        super().xWrite(data, offset)

    def xSync(self, flags: int) -> None:
        Fault.check("sync")
        super().xSync(flags)


class FaultVFS(apsw.VFS):
    def __init__(self) -> None:
        super().__init__("seri-full-disk", "unix", makedefault=True)

    def xOpen(self, name: Any, flags: list[int]) -> apsw.VFSFile:
        return FaultFile("unix", name, flags)


def insert_latest(conn: Any, session: str, messages: Any, now: float) -> int:
    """A second writer on purpose: the revision is read in the same IMMEDIATE transaction."""
    revision = session_table.current_revision(conn, session)
    return conversations.insert_messages(conn, session, messages, now, revision=revision)


def turn(step: int) -> list[Message]:
    call = ToolCall(id=f"sweep{step}", name="glob", arguments='{"pattern": "*"}')
    return [
        Message(role="user", text=f"sweep step {step}: " + "a long prompt " * 300),
        Message(role="assistant", text="calling glob", tool_calls=(call,)),
        Message(role="tool", text="a.py\nb.py", tool_call_id=call.id, tool_name="glob"),
    ]


def write_turn(store: Any, recorder: Recorder, session: str, step: int) -> None:
    """What the interpreter does for a turn's Persist, in one IMMEDIATE transaction."""
    recorder.record(ModelCall(finish_reason="tool_calls", usage=None, tool_calls=1))
    with store.write() as conn:
        insert_latest(conn, session, turn(step), time.time())
        conn.execute("UPDATE sessions SET turns_used = turns_used + 1 WHERE id = ?", (session,))
        recorder.flush_into(conn)


def outside_view(db: Path, session: str) -> tuple[str, int]:
    """integrity_check and the session's message count, read through the default VFS."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY, vfs="unix")
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchall()[0][0]
        count = conn.execute(
            "SELECT count(*) FROM messages WHERE session_id = ?", (session,)
        ).fetchall()[0][0]
    finally:
        conn.close()
    return str(integrity), int(count)


def main() -> int:
    mode, home, session = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    vfs = FaultVFS()  # kept alive for the life of the process
    store = open_store(home)
    recorder = Recorder(store, session, Redactor(), enabled=True)
    recorder.start(synthetic_header(session, recorder.run_id), time.time())
    db = store.path
    for at in range(1, 500):
        step = at
        before = outside_view(db, session)[1]
        Fault.arm(mode, at)
        error: BaseException | None = None
        try:
            write_turn(store, recorder, session, step)
        except apsw.Error as exc:
            error = exc
        finally:
            Fault.armed = False
        integrity, after = outside_view(db, session)
        line: dict[str, Any] = {
            "at": at,
            "fired": Fault.fired,
            "committed": error is None,
            "before": before,
            "after": after,
            "integrity": integrity,
            "autocommit": store.connection.get_autocommit(),
        }
        if error is not None:
            line["error"] = f"{type(error).__name__}: {error}"
            line["context"] = repr(error.__context__)
            line["described"] = describe_sqlite_error(error, db)
            # Usable at once: a read on the same connection.
            line["readable"] = session_table.load_state(store, session).session.messages
            if mode == "write-persist":
                # The space is back: the same turn goes through on the same store.
                write_turn(store, recorder, session, step)
                line["retried"] = outside_view(db, session)[1]
        print(json.dumps(line), flush=True)
        if error is None and Fault.fired is False:
            break  # the fault point is past the end of the transaction: the sweep is done
    store.close()
    del vfs
    return 0


if __name__ == "__main__":
    sys.exit(main())
