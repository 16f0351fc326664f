"""Confinement, C1–C7 (issue 13): what a cloned repository, a hostile model or a shared
machine can make seri read, write or leak.

C1 prompt files that are not what they seem; C2 rewind in a directory that is not the
session's; C3 the OS sandbox around bash; C4 grep's walk; C5 files that are not files;
C6 redaction, right-sized; C7 the environment bash children get. Every test drives the
installed seri against the loopback fake model and checks, from outside, that nothing got
out (no file changed where it must not, no secret in a request, the db or a trajectory).
Where the user seri runs as can change the outcome (C1, C3, C4, C7), a test runs as root and
as a throwaway normal user (``as_user``, tests/faults/users.py); the others say why not.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from tests.faults.ledger import FaultLedger
from tests.faults.support import (
    KEY,
    chat_env,
    db_path,
    one_line_error,
    run,
    seri,
)
from tests.faults.users import AsUser

# A private key shape that must never leave its file.
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "-----END OPENSSH PRIVATE KEY-----\n"
)
MARKER = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE"


def _stored_bytes(home: Path) -> bytes:
    data = b""
    for suffix in ("", "-wal"):
        path = Path(f"{db_path(home)}{suffix}")
        if path.exists():
            data += path.read_bytes()
    return data


# --- C1 --------------------------------------------------------------------------------------


def test_C1_prompt_files_are_read_like_tool_reads(
    as_user: AsUser, fault_ledger: FaultLedger
) -> None:
    """AGENTS.md and rules that are symlinks to a key outside the project, a FIFO, /dev/zero,
    a huge file, a rules directory linked elsewhere: each is skipped with a warning naming
    it, seri starts at once, and the key reaches neither the provider nor seri.db. Another
    user's AGENTS.md (0600): root reads it, a normal user is told it cannot be read."""
    project, seri_home, tmp_path = as_user.project, as_user.seri_home, as_user.base
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text(PRIVATE_KEY)
    outside_rules = tmp_path / "elsewhere"
    outside_rules.mkdir()
    (outside_rules / "steal.md").write_text(PRIVATE_KEY)

    cases = {
        "link to a key": lambda: (project / "AGENTS.md").symlink_to(key),
        "FIFO": lambda: os.mkfifo(project / "AGENTS.md"),
        "/dev/zero": lambda: (project / "AGENTS.md").symlink_to("/dev/zero"),
        "huge": lambda: (project / "AGENTS.md").write_bytes(b"x" * (300 * 1024)),
        "rule linked to a key": lambda: (
            (project / ".seri" / "rules").mkdir(parents=True),
            (project / ".seri" / "rules" / "r.md").symlink_to(key),
        ),
        "rules directory linked out": lambda: (
            (project / ".seri").mkdir(),
            (project / ".seri" / "rules").symlink_to(outside_rules),
        ),
        "global AGENTS.md linked to a key": lambda: (
            seri_home.mkdir(mode=0o700, exist_ok=True),
            (seri_home / "AGENTS.md").symlink_to(key),
        ),
    }
    for name, make in cases.items():
        for leftover in (project / "AGENTS.md", seri_home / "AGENTS.md"):
            if leftover.is_symlink() or leftover.exists():
                leftover.unlink()
        if (project / ".seri").exists():
            _remove_tree(project / ".seri")
        make()
        fault_ledger.injected("C1")
        with FakeModel([{"text": "ok"}]) as fake:
            started = time.monotonic()
            result = as_user.run(
                seri("chat", "-p", "hello"),
                home=seri_home,
                cwd=project,
                env={**chat_env(fake), "HOME": str(home)},
                timeout=30,
            )
            took = time.monotonic() - started
            sent = str(fake.requests)
        assert result.returncode == 0, (name, result.stderr)
        one_line_error(result.stderr)
        assert "not read" in result.stderr and "warning" in result.stderr, (name, result.stderr)
        assert took < 10, (name, took)
        assert MARKER not in sent, name
        assert MARKER.encode() not in _stored_bytes(seri_home), name
        fault_ledger.survived("C1")

    # The difference: a file of another user, closed to others. Root (CAP_DAC_OVERRIDE)
    # reads it like any project file; a normal user is told, and seri starts all the same.
    # Only tests run as root (CI's) can make a file of another user.
    if os.geteuid() != 0:
        return
    (seri_home / "AGENTS.md").unlink()
    theirs = project / "AGENTS.md"
    theirs.unlink(missing_ok=True)
    theirs.write_text("OTHERS-NOTES\n")
    theirs.chmod(0o600)
    os.chown(theirs, 0, 0)
    fault_ledger.injected("C1")
    with FakeModel([{"text": "ok"}]) as fake:
        result = as_user.run(
            seri("chat", "-p", "hello"),
            keep=(theirs,),
            home=seri_home,
            cwd=project,
            env={**chat_env(fake), "HOME": str(home)},
            timeout=30,
        )
        sent = str(fake.requests)
    assert result.returncode == 0, result.stderr
    one_line_error(result.stderr)
    if as_user.user == "root":
        assert "OTHERS-NOTES" in sent and "not read" not in result.stderr, result.stderr
    else:
        assert "OTHERS-NOTES" not in sent
        assert "was not read into the prompt: it cannot be read (Permission denied)" in (
            result.stderr
        ), result.stderr
    fault_ledger.survived("C1")


def _remove_tree(path: Path) -> None:
    for child in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if child.is_symlink() or not child.is_dir():
            child.unlink()
        else:
            child.rmdir()
    if path.is_symlink():
        path.unlink()
    else:
        path.rmdir()


def _mode(path: Path) -> str:
    return stat.filemode(os.lstat(path).st_mode)


# --- C2 --------------------------------------------------------------------------------------


def test_C2_rewind_never_touches_a_directory_that_is_not_the_sessions(
    tmp_path: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """The session's project is renamed; `seri rewind --yes` run in another directory with
    same-named files refuses and names where the files were, changing nothing anywhere; the
    same when another directory took the old path; back in place, the rewind says which
    directory it changes before it changes it. Single: the refusal compares the directory
    seri recorded with the one it finds, before any write; who runs it does not enter."""
    from tests.faults.support import call, session_ids

    project = tmp_path / "proj"
    project.mkdir()
    project = Path(os.path.realpath(project))
    (project / "a.txt").write_text("original\n")
    script = [
        {"tool_calls": [call("w1", "write_file", path="a.txt", content="changed by seri\n")]},
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        result = run(
            seri("chat", "--allow", "write_file", "-p", "change a.txt"),
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
        )
    assert result.returncode == 0, result.stderr
    session = session_ids(seri_home)[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.txt").write_text("someone else's file\n")
    moved = tmp_path / "proj-renamed"
    project.rename(moved)
    rewind = seri("rewind", "--session", session, "--to", "1", "--yes")

    fault_ledger.injected("C2", 3)
    before = _outside_profile(tmp_path, seri_home)
    refused = run(rewind, home=seri_home, cwd=elsewhere)
    assert refused.returncode == 2, refused.stderr
    one_line_error(refused.stderr)
    assert str(project) in refused.stderr and "gone" in refused.stderr
    assert _outside_profile(tmp_path, seri_home) == before
    fault_ledger.survived("C2")

    # Another directory now sits at the old path: not the one the session worked in.
    project.mkdir()
    (project / "a.txt").write_text("a stranger at the old path\n")
    before = _outside_profile(tmp_path, seri_home)
    refused = run(rewind, home=seri_home, cwd=project)
    assert refused.returncode == 2, refused.stderr
    assert "moved or replaced" in refused.stderr
    assert _outside_profile(tmp_path, seri_home) == before
    fault_ledger.survived("C2")

    # Put back: the rewind names the directory first, then restores.
    (project / "a.txt").unlink()
    project.rmdir()
    moved.rename(project)
    done = run(rewind, home=seri_home, cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert done.stderr.index(f"Rewinding files in {project}") < done.stderr.index("Restored")
    assert (project / "a.txt").read_text() == "original\n"
    assert (elsewhere / "a.txt").read_text() == "someone else's file\n"
    fault_ledger.survived("C2")


def _outside_profile(root: Path, profile: Path) -> dict[str, tuple[str, int]]:
    from tests.faults.support import tree_state

    return {k: v for k, v in tree_state(root).items() if not k.startswith(str(profile))}


# --- C5 --------------------------------------------------------------------------------------


def test_C5_files_that_are_not_files(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """write_file and edit aimed at a FIFO, a socket and a device (a copy of /dev/zero made
    inside the project) are refused before anything opens them: no hang, nothing read,
    nothing replaced, no checkpoint. An edit whose result would pass the size cap is a tool
    error and leaves no checkpoint in seri.db. Single: refused by the file's kind and size
    (lstat) before any open, whoever runs seri."""
    import socket

    from tests.faults.support import call, check_store, database, rows

    os.mkfifo(project / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(project / "sock"))
    odd = ["pipe", "sock"]
    try:
        os.mknod(project / "zero", stat.S_IFCHR | 0o666, os.makedev(1, 5))
        odd.append("zero")
    except PermissionError:
        pass  # not root: no device node of our own; the FIFO and the socket remain
    (project / "big.txt").write_text("ab" * (3 * 1024 * 1024))
    calls = []
    for k, name in enumerate(odd):
        calls.append(call(f"w{k}", "write_file", path=name, content="x"))
        calls.append(call(f"e{k}", "edit", path=name, old_string="a", new_string="b"))
    calls.append(
        call("grow", "edit", path="big.txt", old_string="a", new_string="aaaa", replace_all=True)
    )
    script = [{"tool_calls": calls}, {"text": "done"}]
    fault_ledger.injected("C5", len(calls))
    try:
        with FakeModel(script) as fake:
            result = run(
                seri("chat", "--allow", "write_file", "--allow", "edit", "-p", "go"),
                home=seri_home,
                cwd=project,
                env=chat_env(fake),
                timeout=30,
            )
            results = [m for m in fake.requests[-1]["messages"] if m["role"] == "tool"]
    finally:
        server.close()
    assert result.returncode == 0, result.stderr
    assert len(results) == len(calls)
    for message in results:
        text = message["content"]
        assert "only regular files" in text or "over the 10 MiB" in text, text
    assert stat.S_ISFIFO(os.lstat(project / "pipe").st_mode)
    assert stat.S_ISSOCK(os.lstat(project / "sock").st_mode)
    assert (project / "big.txt").stat().st_size == 6 * 1024 * 1024
    check_store(seri_home)
    with database(seri_home) as conn:
        assert rows(conn, "SELECT path FROM checkpoints") == []
    fault_ledger.survived("C5", len(calls))


# --- C4 --------------------------------------------------------------------------------------


def test_C4_grep_is_confined_like_read_file(as_user: AsUser, fault_ledger: FaultLedger) -> None:
    """A deny rule for reading applies to every file grep's walk visits (also through a
    link); links out of the project, a linked directory and a FIFO are not read; the walk
    neither hangs nor leaves the project. Another user's file and directory (0600, 0700):
    root searches them, a normal user's walk passes them by. A catastrophic pattern ends
    with a tool error within the call's time limit."""
    from seri.io.tools.search import grep_files
    from tests.faults.support import call, write_config

    project, seri_home, tmp_path = as_user.project, as_user.seri_home, as_user.base
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("NEEDLE outside\n")
    (project / ".env").write_text("NEEDLE in .env\n")
    (project / "notes.txt").write_text("NEEDLE in notes\n")
    (project / "alias.txt").symlink_to(project / ".env")
    (project / "out.txt").symlink_to(outside / "secret.txt")
    (project / "outdir").symlink_to(outside)
    os.mkfifo(project / "pipe")
    # Files of another user (root's, kept from the chown to the user): only tests run as
    # root (CI's) can make them.
    others = os.geteuid() == 0
    theirs = [project / "theirs.txt", project / "closed", project / "closed" / "in.txt"]
    theirs = theirs if others else []
    if others:
        theirs[1].mkdir(mode=0o700)
        for path in (theirs[0], theirs[2]):
            path.write_text(f"NEEDLE of theirs in {path.name}\n")
            path.chmod(0o600)
    write_config(seri_home, {"permissions": {"deny": ["read_file(.env)"]}})
    script = [{"tool_calls": [call("g1", "grep", pattern="NEEDLE")]}, {"text": "done"}]
    fault_ledger.injected("C4", 5)
    with FakeModel(script) as fake:
        result = as_user.run(
            seri("chat", "-p", "find the needle"),
            keep=theirs,
            home=seri_home,
            cwd=project,
            env=chat_env(fake),
            timeout=30,
        )
        found = next(m for m in fake.requests[-1]["messages"] if m["role"] == "tool")["content"]
    assert result.returncode == 0, result.stderr
    lines = [line for line in found.splitlines() if "of theirs" not in line]
    assert lines[0] == "notes.txt:1:NEEDLE in notes", found
    assert "in .env" not in found and "outside" not in found, found
    assert "2 file(s) not searched: your permission rules deny" in found, found
    of_theirs = {line.split(":", 1)[0] for line in found.splitlines() if "of theirs" in line}
    expected = {"theirs.txt", "closed/in.txt"} if others and as_user.user == "root" else set()
    assert of_theirs == expected, found
    fault_ledger.survived("C4", 5)

    fault_ledger.injected("C4")
    (project / "slow.txt").write_text(("a" * 40 + "c\n") * 50)
    started = time.monotonic()
    timed = grep_files(project, r"(a|aa)+$", "slow.txt", seconds=0.5)
    assert time.monotonic() - started < 5
    assert timed.is_error and timed.detail("outcome") == "timeout", timed.text
    assert "grep stopped after 0.5 s" in timed.text
    fault_ledger.survived("C4")


# --- C3 --------------------------------------------------------------------------------------

ESCAPES = (
    "ln -s .git g && echo evil > g/hooks/pre-commit",
    "ln .git/config hard && echo evil >> hard",
    "env -C .git/hooks sh -c 'echo evil > post-checkout'",
    "echo evil > x.sh && cp -t .git/hooks x.sh",
    "echo evil > y.sh && install -t .git/hooks y.sh",
    "mkdir -p t && echo evil > t/pre-push && tar -cf t.tar -C t pre-push"
    " && tar -xf t.tar -C .git/hooks",
    "git config core.hooksPath /tmp/evil",
    "cp .git/description d && echo evil >> d && diff -u .git/description d > p.diff;"
    " patch .git/description p.diff",
    "python3 -c \"open('.git/hooks/pre-commit', 'w').write('evil')\"",
    "python3 -c \"import os; open(os.path.expanduser('~/.bashrc'), 'a').write('evil')\"",
    "python3 -c \"import os; open(os.path.expanduser('~/.ssh/authorized_keys'), 'a').write('x')\"",
    "python3 -c \"import os; open(os.path.expanduser('~/.gitconfig'), 'a').write('evil')\"",
    'perl -e \'open(F, ">>", "$ENV{SERI_HOME}/config.json") or die "blocked: $!"\'',
    "python3 -c \"import os; open(os.environ['OUTSIDE'] + '/planted', 'w').write('evil')\"",
)
SCRATCH = (
    "python3 -c \"import tempfile; f = tempfile.NamedTemporaryFile('w+', delete=False);"
    " f.write('scratch'); f.seek(0); print(f.read(), f.name)\""
)


def _sandbox_kinds() -> list[str]:
    from seri.io.permissions.sandbox import detect

    return [kind for kind in ("bubblewrap", "landlock") if detect(kind).kind == kind]


def test_C3_bash_runs_in_an_os_sandbox(as_user: AsUser, fault_ledger: FaultLedger) -> None:
    """Under each sandbox this system has (CI installs bubblewrap; Landlock is the kernel's),
    commands the policy lets through (links, hard links, env -C, cp -t, install -t, tar -C,
    git config, patch, interpreters) cannot write .git, the profile, ~/.ssh, ~/.gitconfig,
    a shell rc file or anything outside the project; writing the project and the private
    temporary directory works. As a normal user every one of those files is its own: only
    the sandbox stands in the way."""
    import subprocess

    from tests.faults.support import call, tree_state

    kinds = _sandbox_kinds()
    assert kinds, "no sandbox on this system: install bubblewrap (make test does, as root)"
    project, seri_home, tmp_path = as_user.project, as_user.seri_home, as_user.base
    home, outside = _escape_targets(tmp_path, seri_home)
    guarded = [home, outside]

    def state() -> dict[str, tuple[str, int]]:
        found: dict[str, tuple[str, int]] = {}
        for root in guarded:
            found.update(tree_state(root))
        found.update({k: v for k, v in tree_state(seri_home).items() if "seri.db" not in k})
        return found

    for kind in kinds:
        workdir = project / kind
        workdir.mkdir()
        subprocess.run(["git", "init", "-q", str(workdir)], check=True)
        guarded.append(workdir / ".git")
        before = state()
        calls = [call(f"x{n}", "bash", command=c) for n, c in enumerate(ESCAPES)]
        calls.append(call("inside", "bash", command="echo ok > inside.txt"))
        calls.append(call("tmp", "bash", command=SCRATCH))
        fault_ledger.injected("C3", len(ESCAPES))
        with FakeModel([{"tool_calls": calls}, {"text": "done"}]) as fake:
            env = {
                **chat_env(fake),
                "HOME": str(home),
                "OUTSIDE": str(outside),
                "SERI_SANDBOX": kind,
            }
            result = as_user.run(
                seri("chat", "--allow", "bash", "-p", "escape"),
                home=seri_home,
                cwd=workdir,
                env=env,
                timeout=60,
            )
            results = _tool_results(fake)
        assert result.returncode == 0, result.stderr
        assert "without an OS sandbox" not in result.stderr
        assert state() == before, (kind, results)
        # Every escape reached the sandbox: none was stopped by the policy check first.
        assert not [r for r in results.values() if r.startswith("denied")], results

        assert (workdir / "inside.txt").read_text() == "ok\n", results["inside"]
        assert "scratch" in results["tmp"], results["tmp"]
        fault_ledger.survived("C3", len(ESCAPES))


def _escape_targets(base: Path, seri_home: Path) -> tuple[Path, Path]:
    """A home with ~/.ssh, ~/.gitconfig and ~/.bashrc, a directory outside the project, and
    a profile with its config.json, all under ``base``."""
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA mine\n")
    (home / ".gitconfig").write_text("[user]\n\tname = me\n")
    (home / ".bashrc").write_text("# mine\n")
    outside = base / "outside"
    outside.mkdir()
    seri_home.mkdir(mode=0o700, exist_ok=True)
    (seri_home / "config.json").write_text("{}")
    return home, outside


def _tool_results(fake: FakeModel) -> dict[str, str]:
    return {
        m["tool_call_id"]: m["content"]
        for m in fake.requests[-1]["messages"]
        if m["role"] == "tool"
    }


def test_C3_with_no_sandbox_seri_says_so(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Single: the start-up warning follows from SERI_SANDBOX alone, whoever runs seri."""
    fault_ledger.injected("C3")
    with FakeModel([{"text": "done"}]) as fake:
        result = run(
            seri("chat", "-p", "hi"),
            home=seri_home,
            cwd=project,
            env={**chat_env(fake), "SERI_SANDBOX": "none"},
        )
    assert result.returncode == 0
    assert "seri: warning: bash runs without an OS sandbox" in result.stderr
    fault_ledger.survived("C3")


def _hidden(command: str) -> str:
    """``command`` as the policy cannot read it (base64 into sh): it reaches the sandbox."""
    import base64

    return f"echo {base64.b64encode(command.encode()).decode()} | base64 -d | sh"


# Hidden from the policy; each writes where no sandbox may let it.
HIDDEN_ESCAPES = (
    'echo evil > "$OUTSIDE/planted"',
    "echo evil >> ~/.bashrc",
    "echo x >> ~/.ssh/authorized_keys",
    "echo '{}' > \"$SERI_HOME/config.json\"",
)


@pytest.mark.skipif("landlock" not in _sandbox_kinds(), reason="this kernel has no Landlock")
def test_C3_where_no_user_namespace_can_be_made(as_user: AsUser, fault_ledger: FaultLedger) -> None:
    """Where no user namespace can be made (a container, Ubuntu's AppArmor rule): bubblewrap
    cannot start and seri says it falls back to Landlock; as root and as a normal user bash
    writes nothing outside the project, the profile or the home's files, and a plain write to
    .git/hooks is denied by the policy. The expected difference (README: Sandbox): root makes
    the read-only mount over .git, a normal user cannot, so a write the policy cannot read
    (base64 into sh) reaches .git/hooks as a normal user only, who is warned of it first."""
    import shutil
    import subprocess

    from tests.faults.support import call, tree_state

    project, seri_home = as_user.project, as_user.seri_home
    home, outside = _escape_targets(as_user.base, seri_home)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    hook = project / ".git" / "hooks" / "pre-commit"
    calls = [call(f"x{n}", "bash", command=_hidden(c)) for n, c in enumerate(HIDDEN_ESCAPES)]
    calls.append(call("plain", "bash", command="echo evil > .git/hooks/pre-commit"))
    calls.append(call("hidden", "bash", command=_hidden("echo evil > .git/hooks/pre-commit")))
    calls.append(call("inside", "bash", command="echo ok > inside.txt"))
    before = {**tree_state(home), **tree_state(outside), **tree_state(seri_home)}
    holds = len(HIDDEN_ESCAPES) + 1 + (as_user.user == "root")
    fault_ledger.injected("C3", holds)
    with FakeModel([{"tool_calls": calls}, {"text": "done"}]) as fake:
        result = as_user.run(
            seri("chat", "--allow", "bash", "-p", "escape"),
            without_user_namespaces=True,
            home=seri_home,
            cwd=project,
            env={**chat_env(fake), "HOME": str(home), "OUTSIDE": str(outside)},
            timeout=60,
        )
        results = _tool_results(fake)
    assert result.returncode == 0, result.stderr
    if shutil.which("bwrap"):
        assert "cannot make its namespaces here; commands run under Landlock ABI" in (
            result.stderr
        ), result.stderr
    after = {**tree_state(home), **tree_state(outside), **tree_state(seri_home)}
    assert {k: v for k, v in after.items() if "seri.db" not in k} == {
        k: v for k, v in before.items() if "seri.db" not in k
    }, results
    assert not (outside / "planted").exists()
    assert results["plain"].startswith("denied"), results["plain"]
    assert (project / "inside.txt").read_text() == "ok\n", results["inside"]
    told = "only the permission policy keeps bash from .git" in result.stderr
    if as_user.user == "root":
        assert not hook.exists() and not told, (results["hidden"], result.stderr)
    else:
        assert hook.read_text() == "evil\n", results["hidden"]  # the documented gap
        assert told, result.stderr  # and the person was told before the first command
    fault_ledger.survived("C3", holds)


# --- C6 --------------------------------------------------------------------------------------

SECRET_FILES = {
    ".netrc": "machine api.example.com login bob password NETRC-PW-1234\n",
    "config.yaml": "database:\n  user: app\n  password: YAML-PW-1234\n",
    "settings.ini": "[db]\npassword = INI-PW-1234\n",
    "clone.sh": "git clone https://bob:URL-PW-1234@git.example.com/x.git\n",
    "curl.txt": "Authorization: Basic QkFTSUMtUFctMTIzNDpwYXNz\n",
    "key.pem": PRIVATE_KEY,
}
PLACES = (
    "SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.4242\n"
    "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus\n"
    "PWD=/home/me/project\n"
)


def test_C6_redaction_is_right_sized(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Basic credentials, passwords in URLs, .netrc, YAML and INI passwords and a PEM key read
    by the model are redacted before the provider, the db or a trajectory sees them; paths
    that only sound secret (SSH_AUTH_SOCK, DBUS_SESSION_BUS_ADDRESS, PWD) stay as they are,
    so the model can still edit the file that holds them. Single: redaction rewrites text;
    who read the files does not enter it."""
    from tests.faults.support import call

    for name, text in SECRET_FILES.items():
        (project / name).write_text(text)
    (project / "env.sh").write_text(PLACES)
    calls = [call(f"r{n}", "read_file", path=name) for n, name in enumerate(SECRET_FILES)]
    calls.append(call("places", "read_file", path="env.sh"))
    edit = call(
        "edit",
        "edit",
        path="env.sh",
        old_string="PWD=/home/me/project",
        new_string="PWD=/home/me/elsewhere",
    )
    script = [{"tool_calls": calls}, {"tool_calls": [edit]}, {"text": "done"}]
    env_secrets = {
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
        "SSH_AUTH_SOCK": "/tmp/ssh-XXXXabcd/agent.4242",
    }
    fault_ledger.injected("C6", len(SECRET_FILES) + 2)
    with FakeModel(script) as fake:
        result = run(
            seri("chat", "--allow", "edit", "-p", "read them"),
            home=seri_home,
            cwd=project,
            env={**chat_env(fake), **env_secrets},
        )
        sent = str(fake.requests)
    assert result.returncode == 0, result.stderr
    stored = _stored_bytes(seri_home)
    for leaked in (
        "NETRC-PW-1234",
        "YAML-PW-1234",
        "INI-PW-1234",
        "URL-PW-1234",
        "QkFTSUMtUFctMTIzNDpwYXNz",
        MARKER,
    ):
        assert leaked not in sent, leaked
        assert leaked.encode() not in stored, leaked
    for line in PLACES.splitlines():
        assert line in sent, line
    assert (project / "env.sh").read_text() == PLACES.replace("me/project", "me/elsewhere")
    fault_ledger.survived("C6", len(SECRET_FILES) + 2)


# --- C7 --------------------------------------------------------------------------------------


# Every process's /proc/<pid>/environ the command can read that holds the test's key.
ENVIRON_PROBE = r"""
import os
found = []
for pid in os.listdir("/proc"):
    try:
        if b"c0ffee15c0ffee15" in open(f"/proc/{pid}/environ", "rb").read():
            found.append(pid)
    except OSError:
        pass
open("environ-leaks.txt", "w").write(" ".join(found))
"""


@pytest.mark.parametrize("kind", _sandbox_kinds())
def test_C7_commands_get_no_secrets_in_their_environment(
    as_user: AsUser, kind: str, fault_ledger: FaultLedger
) -> None:
    """bash and its children never see the API key or variables that look secret (the
    environment a command saves to a file is the proof, redaction aside), nor read them
    from seri's own environment (/proc/<pid>/environ of any process: bubblewrap hides
    seri's, Landlock refuses it, as root too); paths such as SSH_AUTH_SOCK stay, so ssh and
    git keep working."""
    from tests.faults.support import call

    project, seri_home = as_user.project, as_user.seri_home
    extra = {
        "MY_SERVICE_TOKEN": "tok-0123456789abcdef",
        "AWS_SECRET_ACCESS_KEY": "aws-secret-0123456789",
        "DATABASE_URL": "postgres://app:DBURL-PW-1234@db.example.com/app",
        "SSH_AUTH_SOCK": "/tmp/ssh-XXXXabcd/agent.4242",
    }
    calls = [
        call("e", "bash", command="env > seen.env; echo saved"),
        call("p", "bash", command=f"python3 -c '{ENVIRON_PROBE}'"),
    ]
    script = [{"tool_calls": calls}, {"text": "done"}]
    fault_ledger.injected("C7", 5)
    with FakeModel(script) as fake:
        result = as_user.run(
            seri("chat", "--allow", "bash", "-p", "show env"),
            home=seri_home,
            cwd=project,
            env={**chat_env(fake), **extra, "SERI_SANDBOX": kind},
        )
        results = _tool_results(fake)
    assert result.returncode == 0, result.stderr
    assert (project / "environ-leaks.txt").read_text() == "", results["p"]
    seen = (project / "seen.env").read_text()
    for secret in (KEY, "tok-0123456789abcdef", "aws-secret-0123456789", "DBURL-PW-1234"):
        assert secret not in seen, secret
    assert "OPENROUTER_API_KEY" not in seen and "MY_SERVICE_TOKEN" not in seen
    assert "SSH_AUTH_SOCK=/tmp/ssh-XXXXabcd/agent.4242" in seen
    fault_ledger.survived("C7", 5)
