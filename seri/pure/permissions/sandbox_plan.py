"""What the OS sandbox around a bash command allows, as data: the same for every backend.

Writable: the project directory and a private temporary directory, nothing else. Read-only
inside the project: the paths no tool may write (``.git``, ``.mcp.json``, ``.seri``, seri's
profile, shell start-up files, ``~/.ssh``, ``~/.gitconfig``) wherever they fall inside it,
existing or not (``protected_paths.guarded_in_project``). Reading, executing and
the network are not confined. The io layer turns a plan into bubblewrap's arguments or into
Landlock rules plus read-only bind mounts.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

import attrs

# The child's temporary directory inside a bubblewrap sandbox (a private one is bound there).
SANDBOX_TMP = "/tmp"


@attrs.frozen
class SandboxPlan:
    project: str
    private_tmp: str
    # Existing absolute paths inside the project that must stay read-only.
    read_only: tuple[str, ...] = ()


def _within(path: str, root: str) -> bool:
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def plan_sandbox(project: str, private_tmp: str, protected: Iterable[str]) -> SandboxPlan:
    """The plan for ``project``; ``protected`` are real absolute paths that exist (the caller
    checks the filesystem). Those outside the project are read-only anyway."""
    inside = sorted({p for p in protected if _within(p, project) and p != project})
    return SandboxPlan(project, private_tmp, tuple(inside))


# What every bubblewrap sandbox is, besides its paths: a user namespace of its own with every
# capability dropped (as root too: no remounting the read-only paths writable, no TIOCSTI,
# no loading modules), a pid namespace of its own with its own /proc (no /proc/<seri's
# pid>/root or /fd: seri and every other process are out of sight), a new session (no
# controlling terminal to push input into), and an end when seri ends. The pid namespace
# also ends whatever a command left running when the command ends: its first process is
# bubblewrap's, and when it goes the kernel kills everything else in the namespace.
BUBBLEWRAP_ISOLATION = (
    "--unshare-user",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--new-session",
    "--die-with-parent",
)


def bubblewrap_arguments(plan: SandboxPlan, cwd: str, command: str, bwrap: str) -> list[str]:
    """``bwrap`` argv running ``bash -c command`` under the plan.

    Order matters: the whole tree read-only, a fresh /dev and /proc, the private /tmp, then
    the project bound writable over it (a project under /tmp stays visible), then the
    protected paths inside the project bound read-only over that (each exists: the caller
    puts an empty stand-in where one does not, see ``seri.io.permissions.stand_ins``).
    """
    argv = [
        bwrap,
        *BUBBLEWRAP_ISOLATION,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        plan.private_tmp,
        SANDBOX_TMP,
        "--bind",
        plan.project,
        plan.project,
    ]
    for path in plan.read_only:
        argv += ["--ro-bind", path, path]
    argv += [
        "--chdir",
        cwd,
        "--setenv",
        "TMPDIR",
        SANDBOX_TMP,
        "--",
        "bash",
        "-c",
        command,
    ]
    return argv
