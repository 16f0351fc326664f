"""Who seri runs as in the security tests: root (CI runs as root) and a normal user.

A pytest plugin (``pytest_plugins`` in ``tests/conftest.py``, so tests/mcp has it too):

- ``throwaway_user``: a user of no importance, made with ``useradd`` for the test session and
  removed after it (when the tests do not run as root, the user running them is that user).
- ``as_user``: parametrised over ``USERS``; an ``AsUser``, a directory of the test's own under
  /tmp that the user owns, and ``run``, which starts the installed seri as that user
  (``setpriv``). Not under pytest's ``tmp_path``: its parent is root's alone (0700).
- ``read_as``: another user trying to read a file (a secret must not be readable by it).

What differs for a normal user: no CAP_DAC_OVERRIDE (other users' files, /root, a profile's
0700/0600 modes are closed to it), and a sandbox that cannot lean on root's mount rights.
``without_user_namespaces`` runs seri where no user namespace can be made (a container, or
Ubuntu's AppArmor restriction): unprivileged bubblewrap and Landlock's read-only mounts need one.

Run as a script (``python users.py UID GID -- argv``) it is that launcher: it enters a user
namespace mapped one to one onto this machine's ids, allows no further user namespace in it,
and runs ``argv`` as ``UID``:``GID``. The machine's own limit is untouched.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

USERS = ("root", "unprivileged")
_CLONE_NEWUSER = 0x10000000


@pytest.fixture(scope="session")
def throwaway_user() -> Iterator[tuple[int, int]]:
    """A user of no importance, made for this test session and removed after it."""
    if os.geteuid() != 0:
        yield os.getuid(), os.getgid()  # already unprivileged: that user is the one
        return
    _remove_stale_users()
    name = f"seri-t{os.getpid()}"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    try:
        info = subprocess.run(["id", "-u", name], check=True, capture_output=True, text=True)
        group = subprocess.run(["id", "-g", name], check=True, capture_output=True, text=True)
        yield int(info.stdout), int(group.stdout)
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


_OPENED = pytest.StashKey[list[tuple[Path, int]]]()


def pytest_configure(config: pytest.Config) -> None:
    # Once, in the process that starts the workers (or the only one): a worker ending
    # early must not close the way while another still runs tests as the user.
    if os.geteuid() == 0 and not hasattr(config, "workerinput"):
        config.stash[_OPENED] = _let_others_reach_the_checkout()


def pytest_unconfigure(config: pytest.Config) -> None:
    for directory, mode in config.stash.get(_OPENED, []):
        directory.chmod(mode)


def _let_others_reach_the_checkout() -> list[tuple[Path, int]]:
    """A checkout made by ``mktemp -d`` is (or sits in) a 0700 directory under /tmp, which
    the throwaway user may not enter, so it could not start the installed seri and every
    test as that user would skip. For the test session, the directories above the checkout
    get the others' search bit (enter, not list) and the checkout read and search; their
    modes are put back after. Only under /tmp: a home directory's mode is not the tests' to
    change."""
    opened = []
    checkout = Path(__file__).resolve().parents[2]
    # The checkout itself must be listed too: Python finds the seri package, which the
    # editable install puts on sys.path by the checkout's path, by listing that directory.
    wanted = [(checkout, 0o005), *((parent, 0o001) for parent in checkout.parents)]
    for directory, bits in wanted:
        if not str(directory).startswith("/tmp/") or directory.is_symlink():
            continue
        mode = directory.stat().st_mode & 0o7777
        if mode & bits != bits:
            directory.chmod(mode | bits)
            opened.append((directory, mode))
    return opened


def _remove_stale_users() -> None:
    """Users an earlier test session made and could not remove (it was killed): their name
    holds the pid of a test process that is gone."""
    import pwd

    for entry in pwd.getpwall():
        pid = entry.pw_name.removeprefix("seri-t")
        if (
            entry.pw_name.startswith("seri-t")
            and pid.isdigit()
            and not Path(f"/proc/{pid}").exists()
        ):
            subprocess.run(["userdel", entry.pw_name], check=False, capture_output=True)


class AsUser:
    """One user seri runs as, and a directory of the test's own (``base``) that it owns."""

    def __init__(self, user: str, ids: tuple[int, int]) -> None:
        if user == "root" and os.geteuid() != 0:
            pytest.skip("the root half needs root (CI runs as root)")
        self.user = user
        self.ids = ids if user == "unprivileged" else (0, 0)
        self.as_other = user == "unprivileged" and os.geteuid() == 0
        if self.as_other:
            unreachable = _seri_unreachable(*self.ids)
            if unreachable:
                pytest.skip(f"another user cannot run the installed seri here: {unreachable}")
        self.base = Path(tempfile.mkdtemp(prefix="seri-as-", dir="/tmp"))
        os.chmod(self.base, 0o755)
        self.project = self.base / "project"
        self.project.mkdir()
        self.seri_home = self.base / "profile"

    def own(self, *keep: Path) -> None:
        """Give everything under ``base`` to the user (the test made it as root), but
        ``keep``: files another user owns on purpose."""
        kept = {str(path) for path in keep}
        for path in (self.base, *self.base.rglob("*")):
            if str(path) not in kept:
                os.lchown(path, *self.ids)

    def command(self, argv: Sequence[str], *, without_user_namespaces: bool = False) -> list[str]:
        """``argv`` run as the user (and where no user namespace can be made, if asked)."""
        uid, gid = self.ids
        if without_user_namespaces:
            return [sys.executable, "-I", __file__, str(uid), str(gid), "--", *argv]
        if not self.as_other:
            return list(argv)
        return ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *argv]

    def run(
        self,
        argv: Sequence[str],
        *,
        keep: Sequence[Path] = (),
        without_user_namespaces: bool = False,
        **options: Any,
    ) -> subprocess.CompletedProcess[str]:
        """``tests.faults.support.run`` of ``argv`` as the user, ``base`` given to it first."""
        from tests.faults.support import run

        self.own(*keep)
        command = self.command(argv, without_user_namespaces=without_user_namespaces)
        return run(command, **options)

    def close(self) -> None:
        """Remove ``base``, never what is mounted beneath it: an escape the sandbox failed to
        stop (``mount --bind /tmp .git/hooks`` as root) would make the removal one of /tmp."""
        left = _unmount_beneath(self.base)
        assert not left, f"{self.base} left in place: still mounted beneath it: {left}"
        shutil.rmtree(self.base, ignore_errors=True)


@functools.cache
def _seri_unreachable(uid: int, gid: int) -> str:
    """Why the user cannot start the installed seri ("" when it can): a directory above the
    checkout or the interpreter that others may not enter (a 0700 temporary checkout,
    ~/.pyenv) leaves only root able to run it, and every run as the user would fail for
    that, not for the sandbox."""
    from tests.conftest import SERI

    done = subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", SERI, "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    if done.returncode == 0:
        return ""
    return (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1][:200]


def _mounts_beneath(base: Path) -> list[str]:
    """Mount points under ``base`` (deepest first), from this process's mount table."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].encode().decode("unicode_escape")  # \040 for a space
        if point.startswith(f"{base}/"):
            found.append(point)
    return sorted(found, key=len, reverse=True)


def _unmount_beneath(base: Path) -> list[str]:
    """Detach every mount under ``base``; those still there after (not root: none can be)."""
    for point in _mounts_beneath(base):
        subprocess.run(["umount", "-l", point], check=False, capture_output=True)
    return _mounts_beneath(base)


@pytest.fixture(params=USERS)
def as_user(request: pytest.FixtureRequest, throwaway_user: tuple[int, int]) -> Iterator[AsUser]:
    who = AsUser(request.param, throwaway_user)
    try:
        yield who
    finally:
        who.close()


def read_as(ids: tuple[int, int], path: Path) -> subprocess.CompletedProcess[bytes]:
    """``cat`` (or ``ls``, for a directory) of ``path`` as ``ids``, with no capabilities:
    what another user gets when it tries to read it. Needs root."""
    uid, gid = ids
    reader = ["ls", "-A"] if path.is_dir() else ["cat"]
    return subprocess.run(
        ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *reader, path],
        capture_output=True,
        check=False,
        timeout=10,
    )


def _without_user_namespaces(uid: int, gid: int, argv: list[str]) -> None:
    """Enter a user namespace mapped one to one, set its limit of user namespaces to 0,
    become ``uid``:``gid`` and exec ``argv``. As root the maps cover every id (written by a
    helper still outside: only a process with CAP_SETUID there may); a normal user maps
    itself alone."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    me = os.getpid()
    maps = {"uid_map": "0 0 4294967295", "gid_map": "0 0 4294967295"}
    if os.geteuid() != 0:
        maps = {"setgroups": "deny", "uid_map": f"{uid} {uid} 1", "gid_map": f"{gid} {gid} 1"}
    entered, mapped = os.pipe(), os.pipe()
    helper = os.fork() if os.geteuid() == 0 else -1
    if helper == 0:
        os.read(entered[0], 1)
        _write_maps(me, maps)
        os.write(mapped[1], b".")
        os._exit(0)
    if libc.unshare(_CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER)")
    if helper < 0:
        _write_maps(me, maps)
    else:
        os.write(entered[1], b".")
        os.read(mapped[0], 1)
        os.waitpid(helper, 0)
    with open("/proc/sys/user/max_user_namespaces", "w") as f:
        f.write("0")
    if os.geteuid() == 0 and uid != 0:
        # setpriv keeps its capabilities up to the exec, as the other tests' setpriv does:
        # seri's interpreter may lie under a directory only root may enter (/root/.pyenv).
        argv = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *argv]
    os.execvp(argv[0], argv)  # a normal user's capabilities in the namespace end here


def _write_maps(pid: int, maps: dict[str, str]) -> None:
    for name, text in maps.items():
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write(text)


if __name__ == "__main__":
    _without_user_namespaces(int(sys.argv[1]), int(sys.argv[2]), sys.argv[4:])
