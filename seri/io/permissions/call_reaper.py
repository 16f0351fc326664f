"""The first process of a bash call outside bubblewrap: it ends everything the call started.

seri starts a call's first process as it starts any (``subprocess``, a session of its own)
and, between fork and exec, that process becomes the call's reaper (``reaper_hook``) instead
of exec'ing: a fork of seri that never returns to seri's code, so no interpreter starts (one
cost ~20 ms of CPU a call, 100-300 ms under load). It makes itself a child subreaper
(``PR_SET_CHILD_SUBREAPER``), so every process the command starts, however it detaches
(``setsid``, ``nohup``, a double fork), is re-parented to it when its own parent ends, never
to init; then it forks again, and only that second child returns, to exec ``bash -c``. When
bash exits, when seri asks (SIGTERM, on a timeout or Ctrl-C), or when seri itself dies
(``PR_SET_PDEATHSIG``), the reaper kills its children with SIGKILL, round after round (a
killed child's children come to it next), until it has none, and only then exits, with
bash's status.

It waits with the signals it answers blocked (``sigwaitinfo``), so none of seri's signal
handlers ever runs in it, and holds none of seri's descriptors (another call's pipe, the
database): it closes all but 0-2 at once. Its memory is seri's, shared until either writes
(the collector is off in it, so it does not walk seri's objects).

Under Landlock (ABI 6 or later) the command runs in a Landlock domain nested inside the
reaper's, scoped for signals (``seri.io.permissions.landlock.signal_scope``), so the command cannot
kill the reaper (or seri) to slip away; with an older Landlock or no sandbox it could, and what
it left would then outlive the call (README: Sandbox).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_SIG_DFL = 0
_ROUNDS = 10_000
# What ends the reaper early (seri asks, the session hangs up) and how it learns bash ended.
_ENDING = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_WATCHED = frozenset({signal.SIGCHLD, *_ENDING})
_CHILDREN_BYTES = 1 << 20


def reaper_hook(
    c_library: ctypes.CDLL,
    confine: Callable[[], None] | None = None,
    scope: Callable[[], None] | None = None,
) -> Callable[[], None]:
    """The pre-exec hook of a reaped call: the forked first process runs ``confine`` (the
    sandbox's own hook, applied to the reaper and all below it), becomes the reaper and forks
    bash's process, which alone returns (to exec), after ``scope`` (its own nested domain).
    Built in seri's process: the forked child only calls."""
    seri = os.getpid()

    def become_reaper() -> None:
        if confine is not None:
            confine()
        _reap(c_library, seri, scope)

    return become_reaper


def _reap(c_library: ctypes.CDLL, seri: int, scope: Callable[[], None] | None) -> None:
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    c_library.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    c_library.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != seri:
        os._exit(128 + signal.SIGTERM)  # seri ended before the death signal was asked for
    bash = os.fork()
    if bash == 0:
        for number in _ENDING:  # as a fresh process gets them, whatever seri made of them
            c_library.signal(number, _SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        if scope is not None:
            scope()
        return
    status = 128 + signal.SIGTERM
    try:
        gc.disable()
        _close_seris_descriptors()
        status = _wait_for(bash)
        _end_all()
    finally:
        _exit_as(c_library, status)


def _close_seris_descriptors() -> None:
    for name in os.listdir("/proc/self/fd"):
        if int(name) > 2:
            with contextlib.suppress(OSError):  # the listing's own, closed already
                os.close(int(name))


def _wait_for(bash: int) -> int:
    """Bash's exit status (negative: the signal that killed it); or, when seri asks first,
    128 and the signal's number, after everything is ended."""
    while True:
        number = signal.sigwaitinfo(_WATCHED).si_signo
        if number != signal.SIGCHLD:
            _end_all()
            return 128 + number
        with contextlib.suppress(ChildProcessError):
            while True:
                pid, waited = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                if pid == bash:
                    return os.waitstatus_to_exitcode(waited)


def _exit_as(c_library: ctypes.CDLL, status: int) -> None:
    """End this process as bash ended: with its exit status, or killed by the same signal, so
    seri reports that signal."""
    if status < 0:
        c_library.signal(-status, _SIG_DFL)  # fails, harmlessly, for SIGKILL and SIGSTOP
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {-status})
        os.kill(os.getpid(), -status)
    os._exit(status if status >= 0 else 128 - status)


def _children() -> list[int]:
    """This process's children, as the kernel lists them (``/proc/self/task/PID/children``:
    one thread here); where that file is missing, every /proc/PID/stat that names it."""
    me = os.getpid()
    try:
        fd = os.open(f"/proc/self/task/{me}/children", os.O_RDONLY)
    except OSError:
        return _children_by_scan(me)
    try:
        listed = os.read(fd, _CHILDREN_BYTES)
    finally:
        os.close(fd)
    return [int(pid) for pid in listed.split()]


def _children_by_scan(me: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            stat = os.read(fd, 4096)
        except OSError:
            continue
        finally:
            os.close(fd)
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _end_all() -> None:
    """Kill every child, and the children that come to this process as they die, until there
    is none: ``waitpid`` says so (ChildProcessError) once the list is empty, since the kernel's
    list may miss a child that ends while it is read."""
    for _ in range(_ROUNDS):
        children = _children()
        if not children:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:  # one the list missed: look the long way
                children = _children_by_scan(os.getpid())
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
