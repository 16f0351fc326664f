"""Session leases in the store: taken when a process starts writing a session, given back
when it ends, taken over when the process that held one is gone.

The check and the take are one ``BEGIN IMMEDIATE`` transaction, so two processes that ask
at the same moment cannot both get the lease. A process killed with SIGKILL leaves its row;
the next one to ask sees that the pid is gone (or belongs to a later process) and takes it.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

from seri.io.session.store import Store
from seri.pure.inputs.errors import EXIT_UNFINISHED, SeriError
from seri.pure.session.leases import Holder, PidObservation, describe_holder, possible_pid, verdict


class SessionBusy(SeriError):
    """Another live process holds the session's lease."""

    exit_code = EXIT_UNFINISHED


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip()
    except OSError:
        return ""


_BOOT = _boot_id()


def _stat_fields(pid: int) -> list[bytes]:
    """The fields of ``/proc/PID/stat`` after the command name (the state first); [] when
    unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    # The command name (field 2) is in parentheses and may itself hold spaces or ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    return fields if len(fields) >= 20 else []


def _token(fields: list[bytes]) -> str:
    return f"{_BOOT}:{fields[19].decode('ascii', 'replace')}" if fields else ""


def start_token(pid: int) -> str:
    """The boot id and start time (clock ticks since boot) of ``pid``; '' when unknown."""
    return _token(_stat_fields(pid)) if possible_pid(pid) else ""


def observe(pid: int) -> PidObservation:
    """What this host shows of ``pid``. An impossible pid is never passed to ``kill``:
    ``kill(-1, 0)`` (every process) and ``kill(0, 0)`` (this process group) succeed."""
    if not possible_pid(pid):
        return PidObservation(exists=False)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return PidObservation(exists=False)
    except PermissionError:
        pass  # another user's process: it exists
    except (OSError, OverflowError):
        return PidObservation(exists=False)
    fields = _stat_fields(pid)
    # Z: a zombie, X: dead (seen for an instant while it is reaped).
    zombie = bool(fields) and fields[0] in (b"Z", b"X")
    return PidObservation(exists=True, started=_token(fields), zombie=zombie)


def this_process(command: str) -> Holder:
    pid = os.getpid()
    return Holder(pid, socket.gethostname(), start_token(pid), command, time.time())


def _holder(conn: Any, session_id: str) -> Holder | None:
    rows = conn.execute(
        "SELECT pid, host, started, command, since FROM leases WHERE session_id = ?",
        (session_id,),
    ).fetchall()
    if not rows:
        return None
    pid, host, started, command, since = rows[0]
    return Holder(int(pid), str(host), str(started), str(command), float(since))


def take_in(conn: Any, session_id: str, me: Holder) -> Holder | None:
    """Take the lease inside the caller's write transaction.

    Returns the stale holder it replaced (None if the lease was free or already ours);
    raises SessionBusy naming a live holder.
    """
    holder = _holder(conn, session_id)
    seen = observe(holder.pid) if holder is not None and holder.host == me.host else None
    decided = verdict(me, holder, seen)
    if decided == "held":
        assert holder is not None
        raise SessionBusy(
            f"session {session_id} is in use by {describe_holder(holder, time.time())}; "
            "wait for it to end, or continue in a copy with `seri chat --resume "
            f"{session_id} --fork`"
        )
    if decided == "mine":
        return None
    conn.execute(
        "INSERT OR REPLACE INTO leases(session_id, pid, host, started, command, since)"
        " VALUES (?,?,?,?,?,?)",
        (session_id, me.pid, me.host, me.started, me.command, me.since),
    )
    return holder if decided == "stale" else None


def take(store: Store, session_id: str, me: Holder) -> Holder | None:
    with store.write() as conn:
        return take_in(conn, session_id, me)


def release(store: Store, session_id: str, me: Holder) -> None:
    with store.write() as conn:
        release_in(conn, session_id, me)


def release_in(conn: Any, session_id: str, me: Holder) -> None:
    """Give the lease back, if it is still ours (a taker of a stale lease may own it now)."""
    conn.execute(
        "DELETE FROM leases WHERE session_id = ? AND pid = ? AND host = ? AND started = ?",
        (session_id, me.pid, me.host, me.started),
    )


def holder_of(store: Store, session_id: str) -> Holder | None:
    return _holder(store.connection, session_id)


class Lease:
    """The lease one command holds on one session, given back by ``close``."""

    def __init__(self, store: Store, session_id: str, me: Holder) -> None:
        self.store = store
        self.session_id = session_id
        self.me = me

    @classmethod
    def take(cls, store: Store, session_id: str, command: str) -> Lease:
        me = this_process(command)
        stale = take(store, session_id, me)
        if stale is not None:
            import sys

            print(
                f"seri: took over session {session_id} from {stale.command} "
                f"(pid {stale.pid}), which is no longer running",
                file=sys.stderr,
            )
        return cls(store, session_id, me)

    def close(self) -> None:
        release(self.store, self.session_id, self.me)

    def close_in(self, conn: Any) -> None:
        """Give the lease back inside the caller's write transaction (one fsync, not two)."""
        release_in(conn, self.session_id, self.me)
