"""What the OS sandbox around a bash command allows, as data: the same for every backend.

Writable: the project directory and a private temporary directory, nothing else. Read-only
inside the project: the paths no tool may write (``.git``, ``.mcp.json``, ``.seri``, seri's
profile, shell start-up files, ``~/.ssh``, ``~/.gitconfig``) wherever they fall inside it,
existing or not (``protected_paths.guarded_in_project``). Reading, executing and
the network are not confined, but under bubblewrap the host's ``/tmp`` is out of sight (a
private one takes its place), so what the person's own commands need from it is bound back
read-only: what holds the directories of their PATH that lie there (an activated virtual
environment under ``/tmp``: ``hidden_path_holders``) and, for a hook or a goal's check, the
entries holding the paths the command names (a hook script kept under ``/tmp``:
``hidden_tops``). The io layer turns a plan into bubblewrap's arguments or into
Landlock rules plus read-only bind mounts.
"""

from __future__ import annotations

import posixpath
import shlex
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
    # Existing host paths under /tmp the person's command needs (``hidden_tops``,
    # ``hidden_path_holders``), bound read-only over the private /tmp (bubblewrap only:
    # Landlock hides nothing).
    visible: tuple[str, ...] = ()


def _within(path: str, root: str) -> bool:
    path, root = posixpath.normpath(path), posixpath.normpath(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def plan_sandbox(
    project: str, private_tmp: str, protected: Iterable[str], visible: Iterable[str] = ()
) -> SandboxPlan:
    """The plan for ``project``; ``protected`` are real absolute paths that exist (the caller
    checks the filesystem). Those outside the project are read-only anyway. ``visible`` are
    existing paths under /tmp to show read-only (``hidden_tops``, ``hidden_path_holders``);
    the project itself and the private /tmp are never among them."""
    inside = sorted({p for p in protected if _within(p, project) and p != project})
    shown = sorted(
        {
            p
            for p in _beneath(visible, SANDBOX_TMP)
            if not _within(p, project) and not _within(p, private_tmp)
        }
    )
    return SandboxPlan(project, private_tmp, tuple(inside), tuple(shown))


def named_paths(command: str) -> tuple[str, ...]:
    """The absolute paths a shell command names as words, or as the value of an assignment
    (``PYTHONPATH=/tmp/lib``), with ``:``-joined lists split. A command shlex cannot read
    (an unclosed quote) is split on whitespace: this finds what to show, it proves nothing."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    found: list[str] = []
    for word in words:
        value = word.split("=", 1)[1] if "=" in word and not word.startswith("/") else word
        found += [part for part in value.split(":") if part.startswith("/")]
    return tuple(dict.fromkeys(found))


def _beneath(paths: Iterable[str], root: str) -> list[str]:
    """``paths`` that lie under ``root`` (not ``root`` itself), normalized."""
    normal = (posixpath.normpath(path) for path in paths)
    return [path for path in normal if path != root and _within(path, root)]


def hidden_tops(paths: Iterable[str], hidden_root: str = SANDBOX_TMP) -> tuple[str, ...]:
    """For each path under ``hidden_root`` (not the root itself), the entry right under the
    root that holds it: ``/tmp/tmp.x1/seri/.venv/bin/python`` -> ``/tmp/tmp.x1``. A script
    under ``/tmp`` usually needs its neighbours (the virtual environment beside an
    interpreter, the modules a hook imports), so the whole entry is shown, read-only."""
    root = posixpath.normpath(hidden_root)
    firsts = (path[len(root) :].lstrip("/").split("/", 1)[0] for path in _beneath(paths, root))
    tops = [posixpath.join(root, first) for first in firsts if first not in ("", ".", "..")]
    return tuple(dict.fromkeys(tops))


def hidden_path_holders(
    directories: Iterable[str], hidden_root: str = SANDBOX_TMP
) -> tuple[str, ...]:
    """For each PATH directory under ``hidden_root``, the directory that holds it
    (``/tmp/x/.venv/bin`` -> ``/tmp/x/.venv``: a virtual environment's tools need the rest
    of it), or the directory itself when it lies right under the root. Narrower than
    ``hidden_tops``: every command, the model's too, gets these."""
    root = posixpath.normpath(hidden_root)
    holders = [
        path if posixpath.dirname(path) == root else posixpath.dirname(path)
        for path in _beneath(directories, root)
    ]
    return tuple(dict.fromkeys(holders))


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

    Order matters: the whole tree read-only, a fresh /dev and /proc, the private /tmp, the
    host paths under /tmp the person's command needs read-only over it, then the project
    bound writable over those (a project under /tmp stays visible and writable), then the
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
    ]
    for path in plan.visible:
        argv += ["--ro-bind", path, path]
    argv += ["--bind", plan.project, plan.project]
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
