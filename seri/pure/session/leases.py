"""One writer per session: who holds a session's lease, and whether that holder still runs.

A lease names a process by three things: the host it runs on, its pid, and the moment it
started (on Linux the boot id plus the start time in clock ticks from ``/proc/PID/stat``).
A pid alone is not enough: pids are reused, and a later process with the same number must
not pass for the seri that held the session. Liveness can only be observed on the same host;
a lease taken on another host counts as live (seri cannot see that machine's processes).

Two holders are dead wherever they are: one whose pid no process can have (0 and negative
pids name process groups, or every process, and ``kill(-1, 0)`` succeeds), and on this host
one that was killed but not yet reaped by its parent (a zombie: it will never write again).
"""

from __future__ import annotations

from typing import Literal

import attrs

Verdict = Literal["mine", "free", "stale", "held"]

# Linux's PID_MAX_LIMIT (on 64-bit; pid_max may be set lower, never higher): other systems'
# pids are smaller still.
PID_MAX_LIMIT = 1 << 22


def possible_pid(pid: int) -> bool:
    """Whether a process can have ``pid``: 0 and negative numbers name process groups (or
    every process) to ``kill``, and no pid exceeds the kernel's limit."""
    return 0 < pid <= PID_MAX_LIMIT


@attrs.frozen
class Holder:
    """A process that holds (or asks for) a lease."""

    pid: int
    host: str
    # '' where the system does not tell a process's start time.
    started: str = ""
    command: str = "seri"
    since: float = 0.0

    def same_process(self, other: Holder) -> bool:
        return (self.pid, self.host, self.started) == (other.pid, other.host, other.started)


@attrs.frozen
class PidObservation:
    """What this host can see of the holder's pid right now."""

    exists: bool
    # The start token of whatever process has that pid now ('' when unknown).
    started: str = ""
    # Killed (or exited) but not yet reaped by its parent: it exists, but will never run again.
    zombie: bool = False


def verdict(me: Holder, holder: Holder | None, seen: PidObservation | None) -> Verdict:
    """Whether ``me`` may write the session whose lease is ``holder``.

    ``seen`` is the observation of ``holder.pid`` on this host (None when the holder is on
    another host, or there is no holder).
    """
    if holder is None:
        return "free"
    if not possible_pid(holder.pid):
        return "stale"  # a row no process can hold (written by hand, or damaged)
    if holder.same_process(me):
        return "mine"
    if holder.host != me.host or seen is None:
        return "held"
    if not seen.exists or seen.zombie:
        return "stale"
    if holder.started and seen.started and holder.started != seen.started:
        return "stale"  # the pid was reused by a later process
    return "held"


def describe_holder(holder: Holder, now: float) -> str:
    """'seri chat (pid 4242 on host dev, for 3 min)'."""
    age = max(0.0, now - holder.since)
    if age < 120:
        span = f"{age:.0f} s"
    elif age < 7200:
        span = f"{age / 60:.0f} min"
    else:
        span = f"{age / 3600:.0f} h"
    return f"{holder.command} (pid {holder.pid} on host {holder.host}, for {span})"
