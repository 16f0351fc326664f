"""The first process of a bash call outside bubblewrap: it ends everything the call started.

Run as a script (``python -I -S call_reaper.py SERI_PID SCOPE bash -c COMMAND``), standard
library only, so nothing of the project's (a ``sitecustomize.py``, ``PYTHONPATH``) is
imported. It makes itself a child subreaper (``PR_SET_CHILD_SUBREAPER``): every process the
command starts, however it detaches (``setsid``, ``nohup``, a double fork), is re-parented
to it when its own parent ends, never to init. When bash exits, when seri asks (SIGTERM, on
a timeout or Ctrl-C), or when seri itself dies (``PR_SET_PDEATHSIG``), it kills its
children with SIGKILL, round after round (a killed child's children come to it next), until
it has none, and only then exits, with bash's status.

Under Landlock (ABI 6 or later, ``SCOPE`` is ``scope``) the command runs in a Landlock domain
nested inside the reaper's, scoped for signals, so the command cannot kill the reaper (or
seri) to slip away; with an older Landlock or no sandbox it could, and what it left would
then outlive the call (README: Sandbox).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_SYS_CREATE_RULESET, _SYS_RESTRICT_SELF = 444, 446
_SCOPE_SIGNAL = 1 << 1
_ROUNDS = 10_000


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


def _children() -> list[int]:
    """The processes whose parent is this one (from /proc: a child's stat names it)."""
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1 and int(fields[1]) == me:
            found.append(int(name))
    return found


def _end_all() -> None:
    for _ in range(_ROUNDS):
        children = _children()
        if not children:
            return
        for pid in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in children:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _nested_scope(libc: ctypes.CDLL) -> None:
    """A Landlock layer of the command's own that only scopes signals: the command may
    signal what it starts, nothing outside (this reaper, seri, the person's processes)."""
    attr = _RulesetAttr(0, 0, _SCOPE_SIGNAL)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
        os.write(2, b"seri: the command's Landlock signal scope could not be set\n")
        os._exit(126)
    os.close(ruleset)


def main(argv: list[str]) -> int:
    seri_pid, scope, command = int(argv[1]), argv[2] == "scope", argv[3:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    def stop(number: int, _frame: object) -> None:
        _end_all()
        os._exit(128 + number)

    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(number, stop)
    if os.getppid() != seri_pid:
        stop(signal.SIGTERM, None)  # seri ended before the death signal was asked for
    bash = os.fork()
    if bash == 0:
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(number, signal.SIG_DFL)
        if scope:
            _nested_scope(libc)
        try:
            os.execvp(command[0], command)  # noqa: S606 - bash -c, as seri would run it
        finally:
            os._exit(127)
    status = 0
    while True:
        try:
            pid, waited = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if pid == bash:
            status = os.waitstatus_to_exitcode(waited)
            break
    _end_all()
    if status < 0:  # killed by a signal: end the same way, so seri reports that signal
        if -status not in (signal.SIGKILL, signal.SIGSTOP):  # those cannot be caught anyway
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
