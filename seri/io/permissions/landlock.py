"""Landlock and the rest of what confines a command in its own process, spoken to the kernel.

Through ctypes (loaded only when a command is confined, never at seri's start):
``landlock_create_ruleset``/``add_rule``/``restrict_self`` for the rules, ``unshare`` and
``mount`` for the read-only bind mounts of the protected paths (where a mount namespace can be
made), ``prctl`` and ``capset`` to drop every capability. ``confinement`` is the hook the
child runs between fork and exec (``seri.io.permissions.sandbox`` decides when); ``signal_scope`` is
the nested domain a command runs in under ``call_reaper`` from ABI 6, which cannot signal its
reaper or seri.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from seri.pure.permissions.sandbox_plan import SandboxPlan

if TYPE_CHECKING:
    import ctypes

# Landlock's system calls have these numbers on every architecture (the generic table).
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_WRITE_FILE = 1 << 1
_REMOVE_DIR = 1 << 4
_REMOVE_FILE = 1 << 5
_MAKE_CHAR = 1 << 6
_MAKE_DIR = 1 << 7
_MAKE_REG = 1 << 8
_MAKE_SOCK = 1 << 9
_MAKE_FIFO = 1 << 10
_MAKE_BLOCK = 1 << 11
_MAKE_SYM = 1 << 12
_REFER = 1 << 13  # ABI 2: links and renames across directories
_TRUNCATE = 1 << 14  # ABI 3

# ABI 6: a domain may be scoped so that it cannot signal processes outside it.
SCOPE_ABI = 6
_SCOPE_SIGNAL = 1 << 1
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
# Device files a command may write (output thrown away, terminals).
_WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


@cache
def _structures() -> tuple[Any, Any]:
    """Landlock's two argument structures (ctypes is loaded only when Landlock is used)."""
    import ctypes

    class RulesetAttr(ctypes.Structure):
        # ABI 1-3 read the first field; ABI 4-5 two; ABI 6 and later all three.
        _fields_ = (
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        )

    class PathBeneathAttr(ctypes.Structure):
        _pack_ = 1  # the kernel's struct is packed: 12 bytes
        _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))

    return RulesetAttr, PathBeneathAttr


@cache
def libc() -> ctypes.CDLL:
    """The C library, for the system calls Python has no function for (one handle a process:
    a child between fork and exec only calls through it)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when there is none (old kernel, not Linux, off)."""
    import ctypes

    try:
        version = libc().syscall(
            _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
        )
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def _write_access(abi: int) -> int:
    access = (
        _WRITE_FILE
        | _REMOVE_DIR
        | _REMOVE_FILE
        | _MAKE_CHAR
        | _MAKE_DIR
        | _MAKE_REG
        | _MAKE_SOCK
        | _MAKE_FIFO
        | _MAKE_BLOCK
        | _MAKE_SYM
    )
    if abi >= 2:
        access |= _REFER
    if abi >= 3:
        access |= _TRUNCATE
    return access


def confinement(plan: SandboxPlan, abi: int) -> Callable[[], None]:
    """What the child runs between fork and exec: read-only mounts, then Landlock, then no
    capability left."""
    _structures()  # made here, in the parent: the child only calls
    c_library = libc()
    last_capability = _last_capability()

    def confine() -> None:
        if plan.read_only:
            _read_only_mounts(c_library, plan.read_only)
        _restrict(c_library, plan, abi)
        _drop_capabilities(c_library, last_capability)

    return confine


def signal_scope() -> Callable[[], None]:
    """A Landlock layer that only scopes signals, for a command's own process (between fork
    and exec): it may signal what it starts, nothing outside (its reaper, seri, the person's
    processes). Where it cannot be set the command does not run (exit 126, said on stderr)."""
    import ctypes

    ruleset_attr, _ = _structures()
    c_library = libc()
    attr = ruleset_attr(0, 0, _SCOPE_SIGNAL)
    size = ctypes.sizeof(attr)

    def scope() -> None:
        ruleset = c_library.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
        if ruleset < 0 or c_library.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            os.write(2, b"seri: the command's Landlock signal scope could not be set\n")
            os._exit(126)
        os.close(ruleset)

    return scope


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def _drop_capabilities(c_library: ctypes.CDLL, last: int) -> None:
    """Every capability gone, for good: as root, Landlock alone leaves CAP_SYS_ADMIN (TIOCSTI
    into any terminal), CAP_SYS_MODULE, CAP_MKNOD. The bounding set is emptied first (so no
    later exec, set-uid or not, gets one back), then the process's own sets. A process with
    no capabilities to begin with (not root, no user namespace) changes nothing."""
    import ctypes

    for number in range(last + 1):
        c_library.prctl(_PR_CAPBSET_DROP, number, 0, 0, 0)
    c_library.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(c_library.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _check(result: int, what: str) -> None:
    import ctypes

    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


@cache
def mount_namespace_possible() -> bool:
    """Whether a child of this process can make the mount namespace ``_read_only_mounts``
    needs (as root, or through an unprivileged user namespace): tried once, in a fork."""
    c_library = libc()
    pid = os.fork()
    if pid == 0:
        made = (
            c_library.unshare(_CLONE_NEWNS) == 0
            or c_library.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) == 0
        )
        os._exit(0 if made else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _read_only_mounts(c_library: ctypes.CDLL, paths: tuple[str, ...]) -> None:
    """Bind the protected paths read-only over themselves, in a mount namespace of the child's
    own (a user namespace too when not privileged). Where none can be made, nothing changes:
    Landlock still confines writes to the project, and the policy keeps bash from these."""
    if c_library.unshare(_CLONE_NEWNS) != 0:
        uid, gid = os.getuid(), os.getgid()
        if c_library.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            return
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with contextlib.suppress(OSError), open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    _check(
        c_library.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None),
        "mount --make-rprivate /",
    )
    for path in paths:
        raw = path.encode()
        _check(c_library.mount(raw, raw, None, _MS_BIND | _MS_REC, None), f"bind {path}")
        _check(
            c_library.mount(None, raw, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None),
            f"read-only {path}",
        )


def _restrict(c_library: ctypes.CDLL, plan: SandboxPlan, abi: int) -> None:
    import ctypes

    ruleset_attr, path_beneath_attr = _structures()
    access = _write_access(abi)
    device_access = _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
    scoped = abi >= SCOPE_ABI
    attr = ruleset_attr(access, 0, _SCOPE_SIGNAL if scoped else 0)
    size = ctypes.sizeof(attr) if scoped else 8
    ruleset = c_library.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
    _check(ruleset, "landlock_create_ruleset")
    try:
        for path, allowed in (
            (plan.project, access),
            (plan.private_tmp, access),
            *((device, device_access) for device in _WRITABLE_DEVICES),
        ):
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENXIO, errno.EACCES):
                    continue
                raise
            try:
                rule = path_beneath_attr(allowed, fd)
                _check(
                    c_library.syscall(
                        _SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0
                    ),
                    f"landlock_add_rule {path}",
                )
            finally:
                os.close(fd)
        _check(c_library.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(c_library.syscall(_SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
