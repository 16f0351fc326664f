"""Confinement, C8–C10 (issue 24): the OS sandbox holds, as root and as a normal user.

C8 trust-bearing files are protected whether or not they exist; C9 root inside the sandbox
reaches neither seri's process (its /proc entry, its terminal) nor the mounts; C10 what a
call starts ends with the call. Each runs under every backend this machine has
(bubblewrap, Landlock) and as each user it can be (root; a throwaway unprivileged user,
``tests/faults/users.py``), drives the installed seri against the loopback fake model, and
checks from outside that the escape failed: the file is not there or unchanged, the
process is gone, the terminal got no input.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pty
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, seri_env
from tests.faults.ledger import FaultLedger
from tests.faults.support import call, chat_env
from tests.faults.users import USERS, AsUser


def _kinds() -> list[str]:
    from seri.io.permissions.sandbox import detect

    return [kind for kind in ("bubblewrap", "landlock") if detect(kind).kind == kind]


KINDS = _kinds()


class Place(AsUser):
    """The user's directory as a home (the project, in C8) with a profile in it."""

    def __init__(self, user: str, ids: tuple[int, int]) -> None:
        super().__init__(user, ids)
        self.project.rmdir()  # each test places its project in the home
        self.home = self.base / "home"
        self.profile = self.home / ".seri"
        self.outside = self.base / "outside"
        for directory in (self.home, self.outside):
            directory.mkdir()

    def chat(
        self,
        fake: FakeModel,
        kind: str,
        cwd: Path,
        *,
        allow: tuple[str, ...] = ("bash",),
        stdin: Any = subprocess.DEVNULL,
        extra: dict[str, str] | None = None,
        keep: tuple[Path, ...] = (),
    ) -> subprocess.CompletedProcess[str]:
        self.own(*keep)
        command = [SERI, "chat", *(a for tool in allow for a in ("--allow", tool)), "-p", "go"]
        env = seri_env(self.profile, {**chat_env(fake), "HOME": str(self.home), **(extra or {})})
        env["SERI_SANDBOX"] = kind
        return subprocess.run(
            self.command(command),
            stdin=stdin,
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=90,
            check=False,
        )


@pytest.fixture(params=[(k, u) for k in KINDS for u in USERS], ids=lambda p: f"{p[0]}-{p[1]}")
def place(request: pytest.FixtureRequest, throwaway_user: tuple[int, int]) -> Iterator[Any]:
    kind, user = request.param
    where = Place(user, throwaway_user)
    try:
        yield kind, where
    finally:
        where.close()


def _entries(root: Path) -> dict[str, str]:
    """Every path under ``root`` (links not followed): its kind and, for a file, its bytes."""
    found = {}
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            found[str(path)] = f"-> {os.readlink(path)}"
        elif path.is_dir():
            found[str(path)] = "dir"
        else:
            found[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _hidden(command: str) -> str:
    """``command`` as the policy cannot read it (base64 into sh): it reaches the sandbox."""
    import base64

    return f"echo {base64.b64encode(command.encode()).decode()} | base64 -d | sh"


def _results(fake: FakeModel) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for m in fake.requests[-1]["messages"]
        if m["role"] == "tool"
    }


# --- C8 --------------------------------------------------------------------------------------

# With the project at $HOME: each creates a file that runs code or grants access later.
HOME_CREATES = (
    "echo evil > ~/.bash_profile",
    "echo evil > ~/.bash_login",
    "echo evil > ~/.zshenv",
    "echo evil > ~/.zprofile",
    "echo evil > ~/.zlogin",
    "echo evil > ~/.bash_aliases",
    "mkdir -p ~/.bashrc.d && echo evil > ~/.bashrc.d/x.sh",
    "mkdir -p ~/.ssh && echo ssh-ed25519 AAAA evil >> ~/.ssh/authorized_keys",
    "mkdir -p ~/.config/git && printf '[core]\\n\\tfsmonitor = evil\\n' > ~/.config/git/config",
    "mkdir -p ~/.config/fish && echo evil > ~/.config/fish/config.fish",
    "printf '[core]\\n\\tfsmonitor = evil\\n' > ~/.gitconfig",
    "echo evil >> ~/.bashrc",
    "echo evil >> ~/.profile",
    'echo \'{"mcpServers": {"x": {"command": "evil"}}}\' > .mcp.json',
    "mkdir -p .seri/rules && echo evil > .seri/rules/x.md",
    "echo evil > ~/.seri/config.json",
    "python3 -c \"import os; open(os.path.expanduser('~/.seri/seri.db'), 'ab').write(b'x')\"",
    "mkdir .git && printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config",
    "git init -q . && git config core.fsmonitor evil",
    "python3 -c \"import os; os.mkdir('.git')\"",
    "echo evil > nested/.git/hooks/pre-commit",
    "git -C nested config core.hooksPath /tmp",
    'echo evil > "$OUTSIDE/planted"',
)
# write_file, edit's kin, creating the same kind of file.
FILE_CREATES = (
    ".bash_aliases",
    ".bashrc.d/x.sh",
    ".bash_profile",
    ".zshenv",
    ".ssh/authorized_keys",
    ".config/git/config",
    ".config/fish/config.fish",
    ".mcp.json",
    ".seri/rules/x.md",
    ".git/config",
    "nested/.git/hooks/pre-commit",
)


@pytest.mark.skipif(not KINDS, reason="no OS sandbox here: install bubblewrap")
def test_C8_trust_bearing_files_are_protected_existing_or_not(
    place: Any, fault_ledger: FaultLedger
) -> None:
    """With the project at $HOME (which has only .bashrc, .profile, a profile and a nested
    repository), bash cannot create a login file, an rc file's sourced companion, ~/.ssh,
    git's or fish's configuration, .mcp.json, .seri/, a .git at the top, nor write a nested
    repository's hooks or seri.db; write_file cannot create them either. Writing the project
    works, and nothing of seri's stand-ins is left behind."""
    kind, where = place
    home = where.home
    (home / ".bashrc").write_text("# mine\n")
    (home / ".profile").write_text("# mine\n")
    where.profile.mkdir(mode=0o700)
    (where.profile / "config.json").write_text("{}")
    subprocess.run(["git", "init", "-q", str(home / "nested")], check=True)
    (home / "notes.txt").write_text("mine\n")
    before = {k: v for k, v in _entries(where.base).items() if "seri.db" not in k}

    calls = [call(f"b{n}", "bash", command=_hidden(c)) for n, c in enumerate(HOME_CREATES)]
    calls += [
        call(f"w{n}", "write_file", path=str(home / p), content="evil\n")
        for n, p in enumerate(FILE_CREATES)
    ]
    calls.append(call("ok", "bash", command="echo ok > made.txt && echo ok >> notes.txt"))
    fault_ledger.injected("C8", len(HOME_CREATES) + len(FILE_CREATES))
    with FakeModel([{"tool_calls": calls}, {"text": "done"}]) as fake:
        result = where.chat(
            fake,
            kind,
            home,
            allow=("bash", "write_file"),
            extra={"OUTSIDE": str(where.outside)},
        )
        results = _results(fake)
    assert result.returncode == 0, result.stderr
    assert "without an OS sandbox" not in result.stderr, result.stderr
    assert (home / "made.txt").read_text() == "ok\n", results["ok"]
    after = {k: v for k, v in _entries(where.base).items() if "seri.db" not in k}
    changed = {k for k in {*before, *after} if before.get(k) != after.get(k)}
    # The only changes: the file made, the file appended to (and seri's own spill/profile).
    expected = {str(home / "made.txt"), str(home / "notes.txt")}
    assert {c for c in changed if not c.startswith(str(where.profile))} == expected, (
        kind,
        sorted(changed),
        results,
    )
    assert {c for c in changed if c.startswith(str(where.profile))} <= {
        c for c in after if c.startswith(str(where.profile / "spill"))
    } | {str(where.profile / "spill")}, sorted(changed)
    assert not [r for k, r in results.items() if k[0] == "b" and r.startswith("denied")]
    for n in range(len(FILE_CREATES)):
        assert "never allowed" in results[f"w{n}"] or "refused" in results[f"w{n}"], results
    fault_ledger.survived("C8", len(HOME_CREATES) + len(FILE_CREATES))


@pytest.mark.skipif(not KINDS, reason="no OS sandbox here: install bubblewrap")
def test_C8_a_project_inside_a_repository_gets_no_git_of_its_own(
    place: Any, fault_ledger: FaultLedger
) -> None:
    """In a project that is a sub-directory of a repository, bash cannot create the project's
    own .git (git's next `status` there would run its core.fsmonitor unsandboxed), nor touch
    the repository's. `git init` in a sub-directory of the project works (a new repository
    the person asked for), and from the next command on its .git is read-only too."""
    kind, where = place
    repo = where.home / "repo"
    project = repo / "project"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (project / "a.txt").write_text("a\n")
    escapes = (
        "mkdir .git && printf '[core]\\n\\tfsmonitor = evil\\n' > .git/config",
        "git init -q && git config core.fsmonitor 'touch /tmp/owned'",
        "echo evil > ../.git/hooks/pre-commit",
        "git config core.fsmonitor evil",
    )
    calls = [call(f"x{n}", "bash", command=_hidden(c)) for n, c in enumerate(escapes)]
    calls.append(call("init", "bash", command="git init -q sub && echo made"))
    second = call("hook", "bash", command="echo evil > sub/.git/hooks/pre-commit; echo $?")
    where.profile.mkdir(mode=0o700)
    before = _entries(repo / ".git")
    fault_ledger.injected("C8", len(escapes) + 1)
    script = [{"tool_calls": calls}, {"tool_calls": [second]}, {"text": "done"}]
    with FakeModel(script) as fake:
        result = where.chat(fake, kind, project)
        results = _results(fake)
    assert result.returncode == 0, result.stderr
    assert not (project / ".git").exists(), results
    assert _entries(repo / ".git") == before
    assert "made" in results["init"], results["init"]
    assert (project / "sub" / ".git" / "HEAD").is_file()
    assert not (project / "sub" / ".git" / "hooks" / "pre-commit").exists(), results["hook"]
    fault_ledger.survived("C8", len(escapes) + 1)


# --- C9 --------------------------------------------------------------------------------------

# Finds seri's process from inside (its command line says `chat` and `-p go`), then: writes
# through /proc/<seri>/root, remounts .git writable, and pushes a line into seri's terminal.
ROOT_ESCAPE = r"""
import fcntl, os, termios
home = os.environ["HOME"]
seri = []
for pid in os.listdir("/proc"):
    try:
        line = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    if b"chat" in line and b"go" in line and b"-p" in line and pid != str(os.getpid()):
        seri.append(pid)
print("seen", seri)
for pid in seri:
    for target in (f"{home}/.bashrc", f"{os.getcwd()}/.git/hooks/pre-commit"):
        try:
            open(f"/proc/{pid}/root{target}", "a").write("evil\n")
            print("WROTE", target)
        except OSError as e:
            print("no", e)
    try:
        fd = os.open(f"/proc/{pid}/fd/0", os.O_RDONLY)
        for ch in "echo INJECTED\n":
            fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
        print("INJECTED-SENT")
    except OSError as e:
        print("no", e)
for tty in [f"/dev/pts/{n}" for n in os.listdir("/dev/pts") if n.isdigit()]:
    try:
        fd = os.open(tty, os.O_RDONLY | os.O_NOCTTY)
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        print("TIOCSTI-PTS", tty)
    except OSError as e:
        print("no", e)
"""
# In place, on a file of another user; each would need a capability seri's command lacks.
THEIRS_ESCAPE = (
    "echo evil >> theirs.txt; echo evil > theirs.txt; chmod 666 theirs.txt;"
    ' chown "$(id -u)" theirs.txt; truncate -s 0 theirs.txt;'
    " python3 -c \"open('theirs.txt', 'w').write('evil')\"; echo done"
)
REMOUNT = (
    "mount -o remount,rw,bind .git; mount -o remount,rw .git; "
    "mount --bind /tmp .git/hooks; echo evil > .git/hooks/pre-commit; echo done"
)


@pytest.mark.skipif(not KINDS, reason="no OS sandbox here: install bubblewrap")
def test_C9_root_in_the_sandbox_reaches_neither_seri_nor_the_mounts(
    place: Any, throwaway_user: tuple[int, int], fault_ledger: FaultLedger
) -> None:
    """seri runs with a terminal as its stdin. From bash: writing ~/.bashrc and the project's
    hooks through /proc/<seri's pid>/root, remounting .git writable, and TIOCSTI into
    /proc/<seri's pid>/fd/0 (or any /dev/pts) all fail: both files are unchanged and the
    terminal received nothing. A project file of another user (0644; the throwaway user's
    when seri runs as root, root's when it runs as that user) cannot be written, chmod-ed
    or chown-ed in place (README: Sandbox, "root and other users' files"): its bytes, mode
    and owner are unchanged."""
    kind, where = place
    project = where.home / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (where.home / ".bashrc").write_text("# mine\n")
    where.profile.mkdir(mode=0o700)
    theirs = project / "theirs.txt"
    theirs.write_text("another user's\n")
    theirs.chmod(0o644)
    can_chown = os.geteuid() == 0  # not root: no file of another user can be made here
    if can_chown:
        os.chown(theirs, *(throwaway_user if where.user == "root" else (0, 0)))
    before = {**_entries(project / ".git"), **_entries(where.home), theirs.name: _owned(theirs)}
    calls = [
        call("proc", "bash", command=f"python3 -c '{ROOT_ESCAPE}'"),
        call("mount", "bash", command=_hidden(REMOUNT)),
    ]
    if can_chown:
        calls.append(call("theirs", "bash", command=_hidden(THEIRS_ESCAPE)))
    master, slave = pty.openpty()
    fault_ledger.injected("C9", 3 + can_chown)
    try:
        if where.as_other:
            os.fchown(slave, *where.ids)
        with FakeModel([{"tool_calls": calls}, {"text": "done"}]) as fake:
            keep = (theirs,) if can_chown else ()
            result = where.chat(fake, kind, project, stdin=slave, keep=keep)
            results = _results(fake)
        typed = _pending(slave) + _pending(master)
    finally:
        os.close(master)
        os.close(slave)
    assert result.returncode == 0, result.stderr
    assert "INJECTED" not in typed and "x" not in typed.replace("\r", ""), (typed, results)
    after = {**_entries(project / ".git"), **_entries(where.home), theirs.name: _owned(theirs)}
    assert {k: v for k, v in after.items() if ".seri" not in k} == {
        k: v for k, v in before.items() if ".seri" not in k
    }, results
    assert "WROTE" not in results["proc"] and "TIOCSTI-PTS" not in results["proc"], results
    if can_chown:  # it ran to its end, refused each time
        assert "done" in results["theirs"], results["theirs"]
    fault_ledger.survived("C9", 3 + can_chown)


def _owned(path: Path) -> str:
    """A file's bytes (hashed), mode and owner."""
    info = path.stat()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"{digest} {oct(info.st_mode)} {info.st_uid}:{info.st_gid}"


def _pending(fd: int) -> str:
    """What can be read from a terminal side now, without waiting."""
    os.set_blocking(fd, False)
    got = b""
    with contextlib.suppress(BlockingIOError, OSError):
        while chunk := os.read(fd, 4096):
            got += chunk
    return got.decode(errors="replace")


# --- C10 -------------------------------------------------------------------------------------

# Detached every common way; each appends to its own heartbeat file every 50 ms.
DETACHED = (
    "setsid nohup sh -c 'while :; do echo . >> beat1; sleep 0.05; done' >/dev/null 2>&1 &",
    "(sh -c 'while :; do echo . >> beat2; sleep 0.05; done' >/dev/null 2>&1 &) ; disown -a",
    "nohup setsid -f sh -c 'trap \"\" TERM HUP; while :; do echo . >> beat3; sleep 0.05; done'"
    " >/dev/null 2>&1",
    # The reaper (Landlock) or the namespace's first process (bubblewrap) killed first.
    # (Once it has beaten: killing the namespace's first process before the loop's first
    # write ends it unwritten, and the test could not tell that from never starting.)
    "sh -c 'while :; do echo . >> beat4; sleep 0.05; done' >/dev/null 2>&1 &"
    " until [ -s beat4 ]; do sleep 0.02; done; kill -9 $PPID; setsid sleep 0.1",
)


@pytest.mark.skipif(not KINDS, reason="no OS sandbox here: install bubblewrap")
def test_C10_what_a_call_starts_ends_with_the_call(place: Any, fault_ledger: FaultLedger) -> None:
    """Processes a bash call leaves behind (setsid, nohup, a double fork, ignoring SIGTERM,
    after killing its parent: the reaper, or the pid namespace's first process) are gone when
    the call returns: the next call sees every heartbeat file stand still, and
    so does the test after seri exits."""
    kind, where = place
    project = where.home / "project"
    project.mkdir()
    where.profile.mkdir(mode=0o700)
    check = (
        "sleep 0.4; a=$(cat beat* 2>/dev/null | wc -c); sleep 0.5; "
        "b=$(cat beat* 2>/dev/null | wc -c); "
        '[ "$a" = "$b" ] && echo STILL || echo ALIVE'
    )
    # Each waits for its first heartbeat: the process was running when the call ended.
    starts = [
        call(
            f"d{n}", "bash", command=_hidden(f"{c}\nuntil [ -s beat{n + 1} ]; do sleep 0.02; done")
        )
        for n, c in enumerate(DETACHED)
    ]
    # And one that never ends on its own: its time limit ends it, and what it detached.
    timed = f"{DETACHED[0].replace('beat1', 'beat9')}\nsleep 300"
    starts.append(call("timed", "bash", command=_hidden(timed), timeout=1))
    script = [
        {"tool_calls": starts},
        {"tool_calls": [call("check", "bash", command=_hidden(check))]},
        {"text": "done"},
    ]
    fault_ledger.injected("C10", len(DETACHED) + 1)
    with FakeModel(script) as fake:
        result = where.chat(fake, kind, project)
        results = _results(fake)
    assert result.returncode == 0, result.stderr
    beats = [project / f"beat{n + 1}" for n in range(len(DETACHED))] + [project / "beat9"]
    assert "timed out after 1 s" in results["timed"], results["timed"]
    assert all(b.exists() for b in beats), results  # each did start
    assert "STILL" in results["check"], results
    sizes = [b.stat().st_size for b in beats]
    time.sleep(0.5)
    assert [b.stat().st_size for b in beats] == sizes
    fault_ledger.survived("C10", len(DETACHED) + 1)


@pytest.mark.skipif(not KINDS, reason="no OS sandbox here: install bubblewrap")
@pytest.mark.parametrize("kind", KINDS)
def test_C10_an_interactive_chat_says_which_sandbox_at_start(
    kind: str, project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """The person sees, before the first prompt, which backend confines bash."""
    from tests.e2e.test_interactive import PROMPT, Terminal, _terminal_env

    fault_ledger.injected("C10")
    with FakeModel([{"text": "hi"}]) as fake:
        terminal = Terminal(
            ["chat"], project, {**_terminal_env(seri_home, fake), "SERI_SANDBOX": kind}
        )
        shown = terminal.expect(PROMPT)
        terminal.type("/exit")
        assert terminal.wait() == 0
    named = {
        "bubblewrap": "bash runs under bubblewrap (",
        "landlock": "bash runs under Landlock ABI",
    }
    assert named[kind] in shown, shown
    fault_ledger.survived("C10")


# --- C11 -------------------------------------------------------------------------------------


@pytest.fixture
def shelf(place: Any) -> Iterator[Path]:
    """A directory of the host's /tmp outside the test's own (where a ``mktemp -d`` checkout
    or a virtual environment lands), owned by the user seri runs as: notes, and a tool on
    the person's PATH."""
    import shutil
    import tempfile

    _, where = place
    kept = Path(tempfile.mkdtemp(prefix="seri-shelf-", dir="/tmp"))
    (kept / "venv" / "bin").mkdir(parents=True)
    (kept / "notes.txt").write_text("shelf notes C11\n")
    tool = kept / "venv" / "bin" / "c11-tool"
    tool.write_text("#!/bin/sh\necho c11 tool ran\n")
    for path in (kept, kept / "venv", kept / "venv" / "bin", tool):
        path.chmod(0o755)
        if where.as_other:
            os.lchown(path, *where.ids)
    try:
        yield kept
    finally:
        shutil.rmtree(kept, ignore_errors=True)


@pytest.mark.skipif(not KINDS, reason="no OS sandbox here: install bubblewrap")
def test_C11_the_hosts_tmp_is_shown_only_read_only_and_only_to_the_persons_commands(
    place: Any, shelf: Path, fault_ledger: FaultLedger
) -> None:
    """Under bubblewrap the host's /tmp is a private one: the model's command reads nothing
    of it but the person's PATH entries there (a tool runs); a hook of the person's own sees
    what it names (a hook script kept under /tmp runs). Under every backend, what is shown
    is read-only: neither the model nor the hook plants a file in it."""
    kind, where = place
    project = where.home / "project"
    project.mkdir()
    where.profile.mkdir(mode=0o700)
    hook = f"cat {shelf}/notes.txt > hook-saw.txt; echo x > {shelf}/planted-by-hook; true"
    hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": hook}]}]}
    (where.profile / "config.json").write_text(json.dumps({"hooks": hooks}))
    plant = f"echo x > {shelf}/venv/bin/planted; echo x > {shelf}/venv/planted"
    calls = [
        call("read", "bash", command=f"cat {shelf}/notes.txt"),
        call("tool", "bash", command="c11-tool"),
        call("plant", "bash", command=_hidden(plant)),
    ]
    fault_ledger.injected("C11", 3)
    before = _entries(shelf)
    with FakeModel([{"tool_calls": calls}, {"text": "done"}]) as fake:
        path = f"{shelf}/venv/bin:{os.environ['PATH']}"
        result = where.chat(fake, kind, project, extra={"PATH": path})
        results = _results(fake)
    assert result.returncode == 0, result.stderr
    assert _entries(shelf) == before, results["plant"]
    assert "c11 tool ran" in results["tool"], results
    assert (project / "hook-saw.txt").read_text() == "shelf notes C11\n"
    if kind == "bubblewrap":
        assert "shelf notes C11" not in results["read"], results["read"]
    fault_ledger.survived("C11", 3)
