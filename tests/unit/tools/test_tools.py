"""The file and shell tools, on real files and real processes (anchors T1, T2, T8, S4)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from seri.io.tools.files import (
    PathRefusedError,
    atomic_write,
    default_protected,
    open_confined,
    resolve_in_project,
    snapshot_file,
)
from seri.io.tools.tools import ToolContext, resolve_subject, run_tool
from seri.pure.tools.tool_outcome import ToolOutcome

HAS_PROC = Path("/proc/self/fd").is_dir()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere"
    path.mkdir()
    (path / "secret").write_text("top secret\n")
    return path


def run(ws: Path, name: str, **args: object) -> ToolOutcome:
    return run_tool(name, args, ToolContext(ws))


def tree_digest(root: Path) -> dict[str, str]:
    """Content and mtime of every file below root, to prove nothing changed."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = hashlib.sha256(path.read_bytes()).hexdigest()
            out[str(path)] = f"{data}:{path.stat().st_mtime_ns}"
    return out


def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        status = Path(f"/proc/{pid}/status")
        if HAS_PROC and status.exists() and "\nState:\tZ" in status.read_text():
            return True  # killed, waiting only to be reaped by init
        time.sleep(0.05)
    return False


# -- read_file ------------------------------------------------------------


def test_read_file_numbers_lines_and_pages(ws: Path) -> None:
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = run(ws, "read_file", path="a.txt", offset=3, limit=2)
    assert not result.is_error
    assert result.text.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "continue with offset=5" in result.text
    assert result.detail("total_lines") == 10
    assert result.detail("truncated") is True
    whole = run(ws, "read_file", path="a.txt")
    assert whole.detail("truncated") is False
    assert whole.text.count("\n") == 9


def test_read_file_caps_lines_and_bytes(ws: Path) -> None:
    (ws / "many.txt").write_text("x\n" * 5000)
    result = run(ws, "read_file", path="many.txt")
    assert result.detail("last_line") == 2000
    assert "of 5000" in result.text
    (ws / "one-line.txt").write_text("y" * 2_000_000)  # T8: 2 million characters, one line
    result = run(ws, "read_file", path="one-line.txt")
    assert len(result.text) < 5_000
    assert "line cut: 2000000 bytes" in result.text
    (ws / "wide.txt").write_text(("z" * 1500 + "\n") * 1000)
    result = run(ws, "read_file", path="wide.txt")
    assert len(result.text.encode()) <= 50_000 + 200
    assert "output cap" in result.text


def test_read_file_reports_binary_empty_missing_and_directories(ws: Path) -> None:
    (ws / "img.bin").write_bytes(b"\x89PNG\x00\x01\x02" * 100)
    result = run(ws, "read_file", path="img.bin")
    assert result.detail("binary") is True
    assert "binary file (700 bytes)" in result.text
    (ws / "empty.txt").write_text("")
    assert "is empty" in run(ws, "read_file", path="empty.txt").text
    missing = run(ws, "read_file", path="nope.txt")
    assert missing.is_error
    assert "does not exist" in missing.text
    (ws / "dir").mkdir()
    assert "is a directory" in run(ws, "read_file", path="dir").text
    (ws / "short.txt").write_text("a\n")
    assert "past the end" in run(ws, "read_file", path="short.txt", offset=9).text


def test_read_file_marks_invalid_utf8(ws: Path) -> None:
    (ws / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    result = run(ws, "read_file", path="latin1.txt")
    assert result.detail("invalid_utf8") is True
    assert "caf\ufffd" in result.text


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_read_file_does_not_hang_on_a_fifo(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    result = run(ws, "read_file", path="pipe")
    assert result.is_error
    assert "not a regular file" in result.text


# -- write_file -----------------------------------------------------------


def test_write_file_creates_parents_and_leaves_no_temp_files(ws: Path) -> None:
    result = run(ws, "write_file", path="a/b/c.txt", content="héllo\n")
    assert not result.is_error
    assert (ws / "a/b/c.txt").read_text() == "héllo\n"
    assert result.details_dict() == {
        "outcome": "applied",
        "path": "a/b/c.txt",
        "bytes": 7,
        "created": True,
    }
    again = run(ws, "write_file", path="a/b/c.txt", content="bye\n")
    assert again.detail("created") is False
    assert [p.name for p in (ws / "a/b").iterdir()] == ["c.txt"]


def test_write_file_keeps_the_mode_of_an_existing_file(ws: Path) -> None:
    script = ws / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    run(ws, "write_file", path="run.sh", content="#!/bin/sh\necho hi\n")
    assert script.stat().st_mode & 0o777 == 0o750


def test_write_file_refuses_protected_paths_even_without_the_policy(
    ws: Path, tmp_path: Path
) -> None:
    (ws / ".git" / "hooks").mkdir(parents=True)
    result = run(ws, "write_file", path=".git/hooks/pre-commit", content="rm -rf ~")
    assert result.is_error
    assert result.detail("outcome") == "refused"
    assert not (ws / ".git/hooks/pre-commit").exists()
    profile = ws / ".seri-home"
    profile.mkdir()
    ctx = ToolContext(ws, protected=default_protected(profile, home=tmp_path / "home"))
    result = run_tool("write_file", {"path": ".seri-home/config.json", "content": "{}"}, ctx)
    assert result.is_error
    assert not (profile / "config.json").exists()


def test_a_git_dir_reached_through_a_link_is_still_protected(ws: Path) -> None:
    (ws / "gitdir" / "hooks").mkdir(parents=True)
    (ws / ".git").symlink_to("gitdir", target_is_directory=True)
    result = run(ws, "write_file", path=".git/hooks/pre-commit", content="x")
    assert result.detail("outcome") == "refused"
    assert not (ws / "gitdir/hooks/pre-commit").exists()


def test_a_write_that_cannot_finish_leaves_the_old_file_whole(ws: Path) -> None:
    """S4: a file-size limit makes the write fail half way; the target is untouched."""
    target = ws / "big.txt"
    target.write_text("original\n")
    child = f"""
import os, resource, signal, sys
from pathlib import Path
from seri.io.tools.files import atomic_write
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    atomic_write(Path({str(ws)!r}), Path({str(target)!r}), b"x" * 100_000)
except OSError as exc:
    print("failed", exc.errno)
    sys.exit(0)
print("wrote")
"""
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, check=True, timeout=30
    )
    assert done.stdout.startswith("failed"), done.stdout + done.stderr
    assert target.read_text() == "original\n"
    assert sorted(p.name for p in ws.iterdir()) == ["big.txt"]


# -- edit -----------------------------------------------------------------


def test_edit_applies_once(ws: Path) -> None:
    (ws / "m.py").write_text("def f():\n    return 1\n")
    result = run(ws, "edit", path="m.py", old_string="return 1", new_string="return 2")
    assert not result.is_error
    assert (ws / "m.py").read_text() == "def f():\n    return 2\n"
    assert result.detail("outcome") == "applied"
    assert result.detail("replacements") == 1


def test_edit_not_found(ws: Path) -> None:
    (ws / "m.py").write_text("a = 1\n")
    result = run(ws, "edit", path="m.py", old_string="b = 2", new_string="c")
    assert result.is_error
    assert result.text.startswith("old_string not found in m.py")
    assert result.detail("outcome") == "not_found"
    assert (ws / "m.py").read_text() == "a = 1\n"


def test_edit_ambiguous_names_the_count_and_replace_all_fixes_it(ws: Path) -> None:
    (ws / "m.py").write_text("x = 1\nx = 1\nx = 1\n")
    result = run(ws, "edit", path="m.py", old_string="x = 1", new_string="x = 2")
    assert result.is_error
    assert "occurs 3 times" in result.text
    assert result.detail("outcome") == "ambiguous"
    assert (ws / "m.py").read_text() == "x = 1\nx = 1\nx = 1\n"
    result = run(ws, "edit", path="m.py", old_string="x = 1", new_string="x = 2", replace_all=True)
    assert result.detail("replacements") == 3
    assert (ws / "m.py").read_text() == "x = 2\nx = 2\nx = 2\n"


def test_edit_matches_lf_text_in_a_crlf_file(ws: Path) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = run(ws, "edit", path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not result.is_error
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


def test_edit_refuses_missing_and_non_text_files(ws: Path) -> None:
    assert "does not exist" in run(ws, "edit", path="no.py", old_string="a", new_string="b").text
    (ws / "bin").write_bytes(b"\xff\xfe\x00")
    assert "not UTF-8 text" in run(ws, "edit", path="bin", old_string="a", new_string="b").text


# -- T1: path traversal -----------------------------------------------------


def test_traversal_is_refused_and_names_the_resolved_path(
    ws: Path, outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY")
    monkeypatch.setenv("HOME", str(home))
    evil = tmp_path / "ws-evil"
    evil.mkdir()
    (evil / "x").write_text("evil\n")
    before = tree_digest(tmp_path)
    cases = {
        "../../etc/passwd": "/etc/passwd",
        "/etc/passwd": "/etc/passwd",
        "~/.ssh/id_rsa": str(home / ".ssh" / "id_rsa"),
        f"{ws}/../{ws.name}-evil/x": str(evil / "x"),
        "a/b/../../../elsewhere/secret": str(outside / "secret"),
    }
    for raw, resolved in cases.items():
        for name, args in [
            ("read_file", {"path": raw}),
            ("write_file", {"path": raw, "content": "pwned"}),
            ("edit", {"path": raw, "old_string": "e", "new_string": "E"}),
            ("grep", {"pattern": ".", "path": raw}),
        ]:
            result = run(ws, name, **args)
            assert result.is_error, (name, raw)
            assert result.detail("outcome") == "refused"
            assert resolved in result.text, (name, raw, result.text)
    assert tree_digest(tmp_path) == before


def test_nul_bytes_and_over_long_paths_are_refused(ws: Path) -> None:
    for raw in ["a\x00b", "a/" * 3000, "x" * 300]:
        with pytest.raises(PathRefusedError):
            resolve_in_project(ws, raw)
        assert run(ws, "write_file", path=raw, content="x").is_error
    assert list(ws.iterdir()) == []


def test_glob_patterns_cannot_leave_the_project(ws: Path) -> None:
    for pattern in ["../*", "/etc/*", "a/../../*"]:
        result = run(ws, "glob", pattern=pattern)
        assert result.is_error
        assert result.detail("outcome") == "refused"


# -- T2: symlinks -----------------------------------------------------------


def test_symlinks_leading_outside_are_never_followed(ws: Path, outside: Path) -> None:
    (ws / "link").symlink_to(outside, target_is_directory=True)
    (ws / "notes.txt").symlink_to(outside / "secret")
    (ws / "new.txt").symlink_to(outside / "created")  # dangling
    before = tree_digest(outside)
    attempts = [
        ("read_file", {"path": "link/secret"}),
        ("write_file", {"path": "link/planted", "content": "x"}),
        ("read_file", {"path": "notes.txt"}),
        ("write_file", {"path": "notes.txt", "content": "overwritten"}),
        ("edit", {"path": "notes.txt", "old_string": "top", "new_string": "no"}),
        ("write_file", {"path": "new.txt", "content": "created through a dangling link"}),
        ("edit", {"path": "new.txt", "old_string": "a", "new_string": "b"}),
    ]
    for name, args in attempts:
        result = run(ws, name, **args)
        assert result.is_error, (name, args)
        assert str(outside) in result.text
    assert tree_digest(outside) == before
    assert not (outside / "created").exists()
    assert not (outside / "planted").exists()


def test_grep_and_glob_do_not_walk_out_through_links(ws: Path, outside: Path) -> None:
    (ws / "link").symlink_to(outside, target_is_directory=True)
    (ws / "notes.txt").symlink_to(outside / "secret")
    (ws / "own.txt").write_text("not secret\n")
    result = run(ws, "grep", pattern="secret")
    assert result.text == "own.txt:1:not secret"
    assert "link/secret" not in run(ws, "glob", pattern="**/*").text


def test_a_symlink_inside_the_project_works(ws: Path) -> None:
    (ws / "real.txt").write_text("v1\n")
    (ws / "alias.txt").symlink_to("real.txt")
    assert "v1" in run(ws, "read_file", path="alias.txt").text
    result = run(ws, "edit", path="alias.txt", old_string="v1", new_string="v2")
    assert result.detail("path") == "real.txt"  # the real target is named
    assert (ws / "real.txt").read_text() == "v2\n"
    assert (ws / "alias.txt").is_symlink()


def test_a_symlinked_project_root_works(tmp_path: Path) -> None:
    real = tmp_path / "real-root"
    real.mkdir()
    root_link = tmp_path / "root-link"  # like /tmp -> /private/tmp on macOS
    root_link.symlink_to(real, target_is_directory=True)
    result = run(root_link, "write_file", path="sub/f.txt", content="ok\n")
    assert not result.is_error
    assert (real / "sub/f.txt").read_text() == "ok\n"
    assert resolve_in_project(root_link, "sub/f.txt") == real / "sub/f.txt"
    assert run(root_link, "read_file", path="../real-root/sub/f.txt").detail("path") == "sub/f.txt"


def test_a_directory_swapped_for_a_link_after_the_check_is_caught(ws: Path, outside: Path) -> None:
    (ws / "d").mkdir()
    (ws / "d" / "f.txt").write_text("inside\n")
    target = resolve_in_project(ws, "d/f.txt")
    # The race: between the check and the use, d becomes a link to outside.
    (ws / "d" / "f.txt").unlink()
    (ws / "d").rmdir()
    (ws / "d").symlink_to(outside, target_is_directory=True)
    (outside / "f.txt").write_text("outside\n")
    with pytest.raises(PathRefusedError):
        atomic_write(ws.resolve(), target, b"pwned")
    if HAS_PROC:
        with pytest.raises(PathRefusedError):
            os.close(open_confined(ws.resolve(), target, os.O_RDONLY))
    assert (outside / "f.txt").read_text() == "outside\n"


def test_a_file_swapped_for_a_link_after_the_check_is_not_opened(ws: Path, outside: Path) -> None:
    (ws / "f.txt").write_text("inside\n")
    target = resolve_in_project(ws, "f.txt")
    (ws / "f.txt").unlink()
    (ws / "f.txt").symlink_to(outside / "secret")
    with pytest.raises(OSError):  # O_NOFOLLOW: ELOOP
        open_confined(ws.resolve(), target, os.O_RDONLY)


def test_resolve_subject_gives_the_real_path_for_the_policy(ws: Path) -> None:
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text("k")
    (ws / "notes.txt").symlink_to("secrets/key")
    rel, absolute = resolve_subject("read_file", {"path": "notes.txt"}, ToolContext(ws))
    assert rel == "secrets/key"
    assert absolute == str(ws.resolve() / "secrets" / "key")
    assert resolve_subject("read_file", {"path": "../x"}, ToolContext(ws)) == (None, None)
    assert resolve_subject("bash", {"command": "ls"}, ToolContext(ws)) == (None, None)


def test_snapshot_file(ws: Path) -> None:
    assert snapshot_file(ws / "absent.txt") is None
    assert snapshot_file(ws / "no-dir" / "absent.txt") is None
    (ws / "f").write_bytes(b"\x00\x01")
    assert snapshot_file(ws / "f") == b"\x00\x01"


# -- glob and grep ------------------------------------------------------------


def test_glob_is_sorted_relative_and_skips_git(ws: Path) -> None:
    for rel in ["b.py", "a.py", "src/z.py", "src/deep/y.py", "src/notes.md", ".git/x.py"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("")
    assert run(ws, "glob", pattern="*.py").text == "a.py\nb.py"
    assert run(ws, "glob", pattern="**/*.py").text.splitlines() == [
        "a.py",
        "b.py",
        "src/deep/y.py",
        "src/z.py",
    ]
    assert run(ws, "glob", pattern="src/*").text.splitlines() == [
        "src/deep/",
        "src/notes.md",
        "src/z.py",
    ]
    assert run(ws, "glob", pattern="src/*/").text == "src/deep/"
    assert "No files match" in run(ws, "glob", pattern="*.rs").text


def test_glob_is_capped(ws: Path) -> None:
    for i in range(1_100):
        (ws / f"f{i:04}.txt").write_text("")
    result = run(ws, "glob", pattern="*.txt")
    assert result.detail("matches") == 1_100
    assert result.detail("shown") == 1_000
    assert "100 more matches" in result.text


def test_grep_prints_path_line_text_and_skips_binary_and_git(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("import os\nx = 'TODO'\n")
    (ws / "b.txt").write_text("TODO: b\nnothing\n")
    (ws / "blob.bin").write_bytes(b"TODO\x00\x00")
    (ws / ".git").mkdir()
    (ws / ".git" / "COMMIT_EDITMSG").write_text("TODO in git\n")
    result = run(ws, "grep", pattern=r"TODO")
    assert result.text.splitlines() == ["b.txt:1:TODO: b", "src/a.py:2:x = 'TODO'"]
    assert run(ws, "grep", pattern="TODO", path="src").text == "src/a.py:2:x = 'TODO'"
    assert run(ws, "grep", pattern="^import", path="src/a.py").text == "src/a.py:1:import os"
    assert "No matches" in run(ws, "grep", pattern="absent").text
    bad = run(ws, "grep", pattern="(")
    assert bad.is_error
    assert "invalid regular expression" in bad.text


def test_grep_is_capped(ws: Path) -> None:
    (ws / "big.txt").write_text("match\n" * 2_000)
    result = run(ws, "grep", pattern="match")
    assert result.detail("truncated") is True
    assert result.detail("matches") == 500
    assert "stopped after 500 matches" in result.text


# -- bash -------------------------------------------------------------------


def test_bash_runs_in_the_project_and_reports_the_exit_code(ws: Path) -> None:
    result = run(ws, "bash", command="pwd; echo err >&2; exit 3")
    assert result.is_error
    assert str(ws.resolve()) in result.text
    assert "err" in result.text
    assert result.text.endswith("[exit code 3]")
    assert result.detail("exit_code") == 3
    assert result.detail("timed_out") is False
    ok = run(ws, "bash", command="true")
    assert not ok.is_error
    assert ok.text == "(no output)\n[exit code 0]"


def test_bash_stdin_is_empty_and_the_user_env_is_kept(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SERI_TEST_VALUE", "kept")
    result = run(ws, "bash", command="cat; echo $SERI_TEST_VALUE", timeout=10)
    assert result.text.startswith("kept")
    assert result.detail("timed_out") is False


@pytest.mark.skipif(not HAS_PROC, reason="needs /proc")
def test_bash_runs_in_its_own_session_without_inherited_fds(ws: Path, tmp_path: Path) -> None:
    fd = os.open(tmp_path / "held.db", os.O_RDWR | os.O_CREAT)
    os.set_inheritable(fd, True)
    try:
        result = run(
            ws,
            "bash",
            command=(
                f"test -e /proc/$$/fd/{fd} && echo leaked || echo closed; "
                'read -r -a stat < /proc/$$/stat; [ "${stat[5]}" = "$$" ] && echo leader'
            ),
        )
    finally:
        os.close(fd)
    assert result.text.splitlines()[:2] == ["closed", "leader"]


def test_bash_giant_output_keeps_head_and_tail_in_bounded_memory(ws: Path) -> None:
    result = run(ws, "bash", command="yes | head -c 50000000; echo; echo THE-END")
    assert result.detail("bytes_total") == 50_000_009
    assert result.detail("truncated") is True
    assert len(result.text.encode()) <= 60_000
    assert result.text.startswith("y\ny\n")
    assert "THE-END" in result.text
    marker = next(line for line in result.text.splitlines() if "omitted" in line)
    assert "of 50000009 bytes" in marker
    assert "lines omitted" in marker


def test_bash_full_output_is_spilled_when_asked(ws: Path, tmp_path: Path) -> None:
    ctx = ToolContext(ws, spill_dir=tmp_path / "spill")
    result = run_tool("bash", {"command": "seq 1 100000"}, ctx)
    spill = result.detail("spill_path")
    assert isinstance(spill, str)
    assert spill in result.text
    assert Path(spill).stat().st_mode & 0o777 == 0o600
    assert Path(spill).read_text().splitlines()[-1] == "100000"
    small = run_tool("bash", {"command": "echo small"}, ctx)
    assert small.detail("spill_path") is None
    assert len(list((tmp_path / "spill").iterdir())) == 1


def test_bash_binary_and_invalid_utf8_output(ws: Path) -> None:
    result = run(ws, "bash", command=r"printf 'ok\000\001\377\n'")
    assert result.detail("binary") is True
    assert "binary data" in result.text
    assert "\x00" not in result.text
    result = run(ws, "bash", command=r"printf 'caf\351\n'")
    assert result.detail("invalid_utf8") is True
    assert "caf\ufffd" in result.text


def test_bash_timeout_kills_the_whole_process_group(ws: Path) -> None:
    started = time.monotonic()
    result = run(ws, "bash", command="sleep 300 & echo $! > grandchild.pid; wait", timeout=1)
    assert time.monotonic() - started < 10
    assert result.is_error
    assert result.detail("timed_out") is True
    assert result.detail("exit_code") is None
    assert "timed out after 1 s" in result.text
    assert wait_dead(int((ws / "grandchild.pid").read_text()))


def test_an_interrupt_kills_the_group_and_propagates(ws: Path) -> None:
    timer = threading.Timer(0.7, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(ws, "bash", command="sleep 300 & echo $! > grandchild.pid; wait", timeout=60)
    finally:
        timer.cancel()
    assert wait_dead(int((ws / "grandchild.pid").read_text()))


def test_background_children_holding_the_pipe_do_not_block(ws: Path) -> None:
    started = time.monotonic()
    result = run(ws, "bash", command="sleep 30 & echo $! > bg.pid; echo started", timeout=60)
    pid = int((ws / "bg.pid").read_text())
    try:
        assert time.monotonic() - started < 10
        assert result.detail("background_left") is True
        assert result.detail("exit_code") == 0
        assert "started" in result.text
    finally:
        os.kill(pid, signal.SIGKILL)


def test_task_and_remember_are_not_run_here(ws: Path) -> None:
    result = run(ws, "task", description="d", prompt="p")
    assert result.is_error
    assert result.detail("outcome") == "unsupported"
