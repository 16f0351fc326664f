"""What the OS sandbox around a bash command allows, as data: the same for every backend.

Writable: the project directory and a private temporary directory, nothing else. Read-only
inside the project: the paths no tool may write (``.git``, seri's profile, shell start-up
files, ``~/.ssh``, ``~/.gitconfig``) wherever they fall inside it. Reading, executing and
the network are not confined. The io layer turns a plan into bubblewrap's arguments or into
Landlock rules plus read-only bind mounts.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

import attrs

from seri.pure.value_record import ValueRecord

# The child's temporary directory inside a bubblewrap sandbox (a private one is bound there).
SANDBOX_TMP = "/tmp"


@attrs.frozen(repr=False, eq=False)
class SandboxPlan(ValueRecord):
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


def bubblewrap_arguments(plan: SandboxPlan, cwd: str, command: str, bwrap: str) -> list[str]:
    """``bwrap`` argv running ``bash -c command`` under the plan.

    Order matters: the whole tree read-only, a fresh /dev, the private /tmp, then the
    project bound writable over it (a project under /tmp stays visible), then the protected
    paths inside the project bound read-only over that. No pid namespace: the command stays
    in seri's process group for it, so killing the group on a timeout or Ctrl-C ends it and
    its children exactly as without a sandbox (``--die-with-parent`` covers the rest).
    """
    argv = [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
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
        "--die-with-parent",
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
