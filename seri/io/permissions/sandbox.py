"""The OS sandbox around the bash tool: bubblewrap, else Landlock, else none (said so).

Which one runs is decided once per seri process (``detect``), from what the system offers
and ``SERI_SANDBOX`` (``auto``, the default; ``bubblewrap``, ``landlock`` or ``none`` to pick):

- **bubblewrap** (``bwrap`` on PATH and able to make its namespaces here, tried with the
  flags every command gets): the command sees the whole tree read-only, the project
  writable, ``.git`` and the other protected paths inside the project read-only again, a
  private ``/tmp``; in a user namespace with every capability dropped, a pid namespace with
  its own ``/proc``, a new session (``sandbox_plan.BUBBLEWRAP_ISOLATION``). The pid
  namespace ends what a command leaves running when the command ends.
- **Landlock** (Linux 5.13 or later; ``seri.io.permissions.landlock`` speaks to the kernel through
  ``landlock_create_ruleset``/``add_rule``/``restrict_self`` with ctypes): applied in the
  child between fork and exec, it allows writing only beneath the project and a private
  temporary directory (``TMPDIR``); the protected paths inside the project are bind-mounted
  read-only first, in a private mount namespace, where one can be made (root, or
  unprivileged user namespaces). Landlock cannot take back a right beneath a directory it
  granted, which is why those mounts come first; where no mount namespace can be made, the
  permission policy alone keeps bash from them. Then every capability is dropped (root
  included), and from ABI 6 the domain is scoped for signals. The command runs under
  ``call_reaper``, which ends what it leaves running.
- **none**: the permission policy check is all there is; seri says so when it starts. On
  Linux the command still runs under ``call_reaper``.

Protected paths that do not exist yet get empty stand-ins for the time of a command
(``seri.io.permissions.stand_ins``), so there is something to bind read-only.

Anchors: Codex's Linux sandbox (read-only bind mounts of ``.git`` in a user and mount
namespace, then Landlock; later bubblewrap with ``--ro-bind / /``, writable roots, and the
protected subpaths read-only again) and Claude Code's sandbox runtime (bubblewrap on Linux).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Literal

import attrs

from seri.io.permissions.landlock import (
    SCOPE_ABI,
    confinement,
    landlock_abi,
    libc,
    mount_namespace_possible,
    signal_scope,
)
from seri.io.permissions.stand_ins import ProtectedNames, StandIns
from seri.pure.permissions.protected_paths import guarded_in_project, is_within
from seri.pure.permissions.sandbox_plan import (
    BUBBLEWRAP_ISOLATION,
    SandboxPlan,
    bubblewrap_arguments,
    hidden_path_holders,
    hidden_tops,
    named_paths,
    plan_sandbox,
)

Kind = Literal["bubblewrap", "landlock", "none"]
CHOICES = ("auto", "bubblewrap", "landlock", "none")

_PROBE_MOUNTS = ("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")


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
        self._names = ProtectedNames()
        self._said_unmounted = False

    @property
    def kind(self) -> Kind:
        return self.detected.kind

    def _private_tmp(self) -> str:
        if self._tmp is None:
            import tempfile

            self._tmp = tempfile.mkdtemp(prefix="seri-tmp-")
        return self._tmp

    def plan(self, shown: tuple[str, ...] = ()) -> SandboxPlan:
        """The paths of the next command; protected paths inside the project that do not
        exist get their stand-ins now (call within ``confined``, which takes them away).
        ``shown`` are paths under /tmp the command needs to see (``hidden_tops``)."""
        project = str(self.project)
        protected = {*self.protected, *(os.path.realpath(p) for p in self.protected)}
        guarded = guarded_in_project(project, tuple(sorted(protected)), self._names.found(project))
        # A stand-in no mount can make read-only would be a protected path the command may
        # fill (Landlock where no mount namespace can be made): none is placed then.
        may_place = self.kind == "bubblewrap" or mount_namespace_possible()
        existing = []
        for path, is_dir in guarded:
            real = os.path.realpath(path)
            if not is_within(real, project):
                continue  # outside the project: read-only already
            if os.path.exists(real) or (may_place and self._stand_ins.place(real, is_dir, project)):
                existing.append(real)
        visible = [top for top in shown if os.path.exists(top)]
        return plan_sandbox(project, self._private_tmp(), existing, visible)

    @contextlib.contextmanager
    def confined(
        self, command: str, cwd: Path, env: Mapping[str, str], *, trusted: bool = False
    ) -> Iterator[tuple[list[str], Callable[[], None] | None, dict[str, str]]]:
        """``command`` (argv, pre-exec hook, environment) for as long as it runs: the
        stand-ins for absent protected paths stay in place until it has ended. ``trusted``:
        the command is the person's own or one they approved (a hook, a goal's check), so
        what it names under /tmp is shown to it read-only, as their PATH's entries there
        are to every command."""
        with self._stand_ins.held():
            yield self.command(command, cwd, env, trusted=trusted)

    @property
    def reaps(self) -> bool:
        """Whether a command runs under ``call_reaper``, which is asked to end it (SIGTERM)
        before its process group is killed: under bubblewrap the pid namespace ends it."""
        return self.kind != "bubblewrap" and sys.platform.startswith("linux")

    def command(
        self, command: str, cwd: Path, env: Mapping[str, str], *, trusted: bool = False
    ) -> tuple[list[str], Callable[[], None] | None, dict[str, str]]:
        """The argv, the pre-exec hook and the environment that run ``command`` confined."""
        child_env = dict(env)
        self._verify()
        argv = ["bash", "-c", command]
        if self.kind == "none":
            return argv, _reaper(None, None) if self.reaps else None, child_env
        if self.kind == "bubblewrap":
            plan = self.plan(_hidden_needs(command if trusted else "", child_env))
            child_env.setdefault("XDG_CACHE_HOME", "/tmp/.cache")
            argv = bubblewrap_arguments(plan, str(cwd), command, self.detected.bwrap)
            return argv, None, child_env
        plan = self.plan()
        child_env["TMPDIR"] = plan.private_tmp
        child_env.setdefault("XDG_CACHE_HOME", os.path.join(plan.private_tmp, ".cache"))
        self._say_if_unmounted(plan)
        scope = signal_scope() if self.detected.abi >= SCOPE_ABI else None
        return argv, _reaper(confinement(plan, self.detected.abi), scope), child_env

    def _say_if_unmounted(self, plan: SandboxPlan) -> None:
        """Once, where Landlock's read-only mounts cannot be made (a normal user without user
        namespaces): a command the policy cannot read could write the protected paths in
        the project, and the person is told so before it runs."""
        if self._said_unmounted or not plan.read_only or mount_namespace_possible():
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


def _hidden_needs(command: str, env: Mapping[str, str]) -> tuple[str, ...]:
    """What the private /tmp would hide from a command and it needs: what holds its PATH's
    directories there, and the entries holding the paths ``command`` names, each as written
    and as resolved (a symlink under /tmp may lead elsewhere in it)."""
    path = [entry for entry in env.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    named = [entry for entry in named_paths(command) if os.path.isabs(entry)]
    return (
        *hidden_path_holders([*path, *(os.path.realpath(entry) for entry in path)]),
        *hidden_tops([*named, *(os.path.realpath(entry) for entry in named)]),
    )


def _reaper(
    confine: Callable[[], None] | None, scope: Callable[[], None] | None
) -> Callable[[], None]:
    """The pre-exec hook that makes the call's first process its reaper (``call_reaper``,
    loaded with the first command, not at start)."""
    from seri.io.permissions.call_reaper import reaper_hook

    return reaper_hook(libc(), confine, scope)
