"""The OS sandbox around the bash tool: bubblewrap, else Landlock, else none (said so).

Which one runs is decided once per seri process (``detect``), from what the system offers
and ``SERI_SANDBOX`` (``auto``, the default; ``bubblewrap``, ``landlock`` or ``none`` to pick):

- **bubblewrap** (``bwrap`` on PATH and able to make its namespaces here, tried with the
  flags every command gets): the command sees the whole tree read-only, the project
  writable, ``.git`` and the other protected paths inside the project read-only again, a
  private ``/tmp``; in a user namespace with every capability dropped, a pid namespace with
  its own ``/proc``, a new session (``sandbox_plan.BUBBLEWRAP_ISOLATION``). The pid
  namespace ends what a command leaves running when the command ends.
- **Landlock** (Linux 5.13 or later; this module speaks to the kernel through
  ``landlock_create_ruleset``/``add_rule``/``restrict_self`` with ctypes): applied in the
  child between fork and exec, it allows writing only beneath the project and a private
  temporary directory (``TMPDIR``); the protected paths inside the project are bind-mounted
  read-only first, in a private mount namespace, where one can be made (root, or
  unprivileged user namespaces). Landlock cannot take back a right beneath a directory it
  granted, which is why those mounts come first; where no mount namespace can be made, the
  permission policy alone keeps bash from them. Then every capability is dropped (root
  included), and from ABI 6 the domain is scoped for signals. The command runs under
  ``call_reaper``, which ends what it leaves running.
- **none**: the permission policy check is all there is; seri says so when it starts.

Protected paths that do not exist yet get empty stand-ins for the time of a command
(``seri.io.stand_ins``), so there is something to bind read-only.

Anchors: Codex's Linux sandbox (read-only bind mounts of ``.git`` in a user and mount
namespace, then Landlock; later bubblewrap with ``--ro-bind / /``, writable roots, and the
protected subpaths read-only again) and Claude Code's sandbox runtime (bubblewrap on Linux).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

from seri.io.stand_ins import StandIns, found_by_name
from seri.pure.protected_paths import guarded_in_project, is_within
from seri.pure.sandbox_plan import (
    BUBBLEWRAP_ISOLATION,
    SandboxPlan,
    bubblewrap_arguments,
    plan_sandbox,
)

Kind = Literal["bubblewrap", "landlock", "none"]
CHOICES = ("auto", "bubblewrap", "landlock", "none")

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
_SCOPE_ABI = 6
_SCOPE_SIGNAL = 1 << 1
_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_CAPABILITY_VERSION_3 = 0x20080522
_REAPER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "call_reaper.py")

_PROBE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_RDONLY, _MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
# Device files a command may write (output thrown away, terminals).
_WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


if TYPE_CHECKING:
    import ctypes


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


def _libc() -> ctypes.CDLL:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when there is none (old kernel, not Linux, off)."""
    import ctypes

    try:
        libc = _libc()
        version = libc.syscall(
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


def _bwrap_works(bwrap: str) -> bool:
    import subprocess  # only a probe starts a process; opening a sandbox does not

    try:
        # The isolation every command gets: where a container forbids a user or pid
        # namespace, or mounting a /proc, bubblewrap is not used (Landlock is).
        probe = subprocess.run(
            [bwrap, *BUBBLEWRAP_ISOLATION, *_PROBE_MOUNTS, "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return probe.returncode == 0


@attrs.frozen
class Detected:
    kind: Kind
    # Why this one (or why none), for the start-up line and the trajectory header.
    detail: str
    abi: int = 0
    bwrap: str = ""


def _on_path(program: str) -> str:
    """Where ``program`` is in PATH's absolute directories (without importing shutil, with
    bz2, lzma and zlib behind it: ~3 ms of every chat's start, to look for bwrap).

    An empty or relative entry (``:`` or ``.``, the current directory) is skipped: seri starts
    in a project it may not trust, and a ``bwrap`` placed there must not become the sandbox."""
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(directory):
            continue
        candidate = os.path.join(directory, program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return ""


def detect(choice: str = "auto", *, probe: bool = True) -> Detected:
    """Which sandbox this system offers (and ``choice`` allows).

    ``probe=False`` takes an installed ``bwrap`` on trust (no process is started: seri's
    start-up stays fast); ``Sandbox`` then tries it once before the first command and falls
    back to Landlock (or none, said on stderr) if it cannot make its namespaces here.
    """
    if choice == "none":
        return Detected("none", "turned off by SERI_SANDBOX=none")
    bwrap = _on_path("bwrap")
    if choice in ("auto", "bubblewrap") and bwrap and (not probe or _bwrap_works(bwrap)):
        return Detected("bubblewrap", f"bubblewrap ({bwrap})", bwrap=bwrap)
    abi = landlock_abi()
    if choice in ("auto", "landlock") and abi:
        return Detected("landlock", f"Landlock ABI {abi}", abi=abi)
    missing = {
        "bubblewrap": "bubblewrap is not installed or cannot make its namespaces here",
        "landlock": "this kernel has no Landlock (Linux 5.13 or later)",
    }.get(choice, "neither bubblewrap nor Landlock (Linux 5.13 or later) is available here")
    return Detected("none", missing)


class Sandbox:
    """One seri run's sandbox: the backend, the plan's paths, the private temp directory."""

    def __init__(
        self,
        detected: Detected,
        project: Path,
        protected: tuple[str, ...],
        *,
        choice: str = "auto",
        verified: bool = False,
    ) -> None:
        self.detected = detected
        self.project = Path(os.path.realpath(project))
        self.protected = protected
        self.choice = choice
        self._verified = verified or detected.kind != "bubblewrap"
        self._tmp: str | None = None
        self._stand_ins = StandIns()
        self._said_unmounted = False

    @property
    def kind(self) -> Kind:
        return self.detected.kind

    def _private_tmp(self) -> str:
        if self._tmp is None:
            import tempfile

            self._tmp = tempfile.mkdtemp(prefix="seri-tmp-")
        return self._tmp

    def plan(self) -> SandboxPlan:
        """The paths of the next command; protected paths inside the project that do not
        exist get their stand-ins now (call within ``confined``, which takes them away)."""
        project = str(self.project)
        protected = {*self.protected, *(os.path.realpath(p) for p in self.protected)}
        guarded = guarded_in_project(project, tuple(sorted(protected)), found_by_name(project))
        # A stand-in no mount can make read-only would be a protected path the command may
        # fill (Landlock where no mount namespace can be made): none is placed then.
        may_place = self.kind == "bubblewrap" or _mount_namespace_possible()
        existing = []
        for path, is_dir in guarded:
            real = os.path.realpath(path)
            if not is_within(real, project):
                continue  # outside the project: read-only already
            if os.path.exists(real) or (may_place and self._stand_ins.place(real, is_dir, project)):
                existing.append(real)
        return plan_sandbox(project, self._private_tmp(), existing)

    @contextlib.contextmanager
    def confined(
        self, command: str, cwd: Path, env: Mapping[str, str]
    ) -> Iterator[tuple[list[str], Callable[[], None] | None, dict[str, str]]]:
        """``command`` (argv, pre-exec hook, environment) for as long as it runs: the
        stand-ins for absent protected paths stay in place until it has ended."""
        with self._stand_ins.held():
            yield self.command(command, cwd, env)

    @property
    def reaps(self) -> bool:
        """Whether a command runs under ``call_reaper``, which is asked to end it (SIGTERM)
        before its process group is killed: under bubblewrap the pid namespace ends it."""
        return self.kind != "bubblewrap" and sys.platform.startswith("linux")

    def command(
        self, command: str, cwd: Path, env: Mapping[str, str]
    ) -> tuple[list[str], Callable[[], None] | None, dict[str, str]]:
        """The argv, the pre-exec hook and the environment that run ``command`` confined."""
        child_env = dict(env)
        self._verify()
        if self.kind == "none":
            linux = sys.platform.startswith("linux")  # the reaper speaks to /proc and prctl
            argv = _reaped(command, scope=False) if linux else ["bash", "-c", command]
            return argv, None, child_env
        plan = self.plan()
        if self.kind == "bubblewrap":
            child_env.setdefault("XDG_CACHE_HOME", "/tmp/.cache")
            argv = bubblewrap_arguments(plan, str(cwd), command, self.detected.bwrap)
            return argv, None, child_env
        child_env["TMPDIR"] = plan.private_tmp
        child_env.setdefault("XDG_CACHE_HOME", os.path.join(plan.private_tmp, ".cache"))
        self._say_if_unmounted(plan)
        hook = _landlock_hook(plan, self.detected.abi)
        return _reaped(command, scope=self.detected.abi >= _SCOPE_ABI), hook, child_env

    def _say_if_unmounted(self, plan: SandboxPlan) -> None:
        """Once, where Landlock's read-only mounts cannot be made (a normal user without user
        namespaces): a command the policy cannot read could write the protected paths in
        the project, and the person is told so before it runs."""
        if self._said_unmounted or not plan.read_only or _mount_namespace_possible():
            return
        self._said_unmounted = True
        print(
            "seri: warning: no mount namespace can be made here (a normal user without user "
            "namespaces), so under Landlock only the permission policy keeps bash from .git "
            "and the other protected paths in the project (README: Sandbox)",
            file=sys.stderr,
        )

    def _verify(self) -> None:
        """Before the first command: bubblewrap, taken on trust at start, is tried once."""
        if self._verified:
            return
        self._verified = True
        if _bwrap_works(self.detected.bwrap):
            return
        fallback = detect("landlock" if self.choice == "auto" else "none")
        if self.choice == "bubblewrap":
            fallback = Detected("none", "bubblewrap cannot make its namespaces here")
        under = fallback.detail if fallback.kind != "none" else "no OS sandbox"
        print(
            f"seri: warning: bubblewrap ({self.detected.bwrap}) cannot make its namespaces "
            f"here; commands run under {under}",
            file=sys.stderr,
        )
        self.detected = fallback

    def close(self) -> None:
        if self._tmp is not None:
            import shutil

            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


def _landlock_hook(plan: SandboxPlan, abi: int) -> Callable[[], None]:
    """What the child runs between fork and exec: read-only mounts, then Landlock."""

    _structures()  # made here, in the parent: the child only calls

    last_capability = _last_capability()

    def confine() -> None:
        libc = _libc()
        if plan.read_only:
            _read_only_mounts(libc, plan.read_only)
        _restrict(libc, plan, abi)
        _drop_capabilities(libc, last_capability)

    return confine


def _reaped(command: str, *, scope: bool) -> list[str]:
    """``bash -c command`` under ``call_reaper`` (which ends whatever it leaves running).

    The interpreter is seri's own, reached through ``/proc/self/exe`` in the forked child:
    that link leads to the running binary whatever directories lie on its path (a Python
    under a home directory another user cannot enter, as seen from a user namespace)."""
    mode = "scope" if scope else "plain"
    return ["/proc/self/exe", "-I", "-S", _REAPER, str(os.getpid()), mode, "bash", "-c", command]


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 63


def _drop_capabilities(libc: ctypes.CDLL, last: int) -> None:
    """Every capability gone, for good: as root, Landlock alone leaves CAP_SYS_ADMIN (TIOCSTI
    into any terminal), CAP_SYS_MODULE, CAP_MKNOD. The bounding set is emptied first (so no
    later exec, set-uid or not, gets one back), then the process's own sets. A process with
    no capabilities to begin with (not root, no user namespace) changes nothing."""
    import ctypes

    for number in range(last + 1):
        libc.prctl(_PR_CAPBSET_DROP, number, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(libc.capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def _check(result: int, what: str) -> None:
    import ctypes

    if result < 0:
        number = ctypes.get_errno()
        raise OSError(number, f"{what}: {os.strerror(number)}")


@cache
def _mount_namespace_possible() -> bool:
    """Whether a child of this process can make the mount namespace ``_read_only_mounts``
    needs (as root, or through an unprivileged user namespace): tried once, in a fork."""
    libc = _libc()
    pid = os.fork()
    if pid == 0:
        made = libc.unshare(_CLONE_NEWNS) == 0 or libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) == 0
        os._exit(0 if made else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def _read_only_mounts(libc: ctypes.CDLL, paths: tuple[str, ...]) -> None:
    """Bind the protected paths read-only over themselves, in a mount namespace of the child's
    own (a user namespace too when not privileged). Where none can be made, nothing changes:
    Landlock still confines writes to the project, and the policy keeps bash from these."""
    if libc.unshare(_CLONE_NEWNS) != 0:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            return
        for name, text in (
            ("setgroups", "deny"),
            ("uid_map", f"{uid} {uid} 1"),
            ("gid_map", f"{gid} {gid} 1"),
        ):
            with contextlib.suppress(OSError), open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    _check(libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
    for path in paths:
        raw = path.encode()
        _check(libc.mount(raw, raw, None, _MS_BIND | _MS_REC, None), f"bind {path}")
        _check(
            libc.mount(None, raw, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY, None),
            f"read-only {path}",
        )


def _restrict(libc: ctypes.CDLL, plan: SandboxPlan, abi: int) -> None:
    import ctypes

    ruleset_attr, path_beneath_attr = _structures()
    access = _write_access(abi)
    device_access = _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
    scoped = abi >= _SCOPE_ABI
    attr = ruleset_attr(access, 0, _SCOPE_SIGNAL if scoped else 0)
    size = ctypes.sizeof(attr) if scoped else 8
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
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
                    libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0),
                    f"landlock_add_rule {path}",
                )
            finally:
                os.close(fd)
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
        _check(libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)
