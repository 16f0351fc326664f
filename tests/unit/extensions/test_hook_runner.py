"""The hook runner, with real hook commands: its JSON in, stdout and stderr apart and capped as
they are read, and a hook ended at its time limit with everything it started, as bash is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seri.io.extensions.hook_runner import OUTPUT_CAP, run_hook
from seri.io.permissions.sandbox import Sandbox, detect

# Each way a hook can run: in each OS sandbox this machine has, and outside any (the person's
# config.json says "sandbox": false for it).
PLACES = [k for k in ("bubblewrap", "landlock", "none") if detect(k).kind == k] + ["outside"]


@pytest.fixture(params=PLACES)
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sandbox | None]:
    if request.param == "outside":
        yield None
        return
    made = Sandbox(detect(request.param), tmp_path, (), choice=request.param)
    try:
        yield made
    finally:
        made.close()


def _gone(marker: str, within: float = 5.0) -> bool:
    """Whether no process (zombies aside) has ``marker`` on its command line, soon enough."""
    deadline = time.monotonic() + within
    while True:
        found = subprocess.run(
            ["pgrep", "-f", marker], capture_output=True, text=True, check=False
        ).stdout.split()
        alive = [pid for pid in found if _state(pid) not in ("Z", "X", "")]
        if not alive or time.monotonic() > deadline:
            return not alive
        time.sleep(0.05)


def _state(pid: str) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.rfind(")") + 2 :].split()[0]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
def test_a_hook_that_daemonizes_leaves_nothing_running_after_its_time_limit(
    sandbox: Sandbox | None, tmp_path: Path
) -> None:
    """``setsid … &`` leaves the hook's process group; the hook's end takes it all the same."""
    marker = f"{1000 + os.getpid() % 1000}.{time.monotonic_ns() % 10**6}"
    command = f"setsid sleep {marker} >/dev/null 2>&1 & sleep 30"
    started = time.monotonic()
    result = run_hook(command, "{}", cwd=tmp_path, timeout=1, env=dict(os.environ), sandbox=sandbox)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 10
    assert _gone(f"sleep {marker}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the reaper is Linux's")
def test_a_hook_that_daemonizes_and_exits_leaves_nothing_running(
    sandbox: Sandbox | None, tmp_path: Path
) -> None:
    marker = f"{2000 + os.getpid() % 1000}.{time.monotonic_ns() % 10**6}"
    command = f"setsid sleep {marker} >/dev/null 2>&1 & echo started"
    result = run_hook(
        command, "{}", cwd=tmp_path, timeout=20, env=dict(os.environ), sandbox=sandbox
    )
    assert (result.exit_code, result.stdout) == (0, "started\n")
    assert _gone(f"sleep {marker}")


def test_stdout_and_stderr_stay_apart_and_each_is_capped(tmp_path: Path) -> None:
    """A hook's JSON goes on stdout, its reason on stderr (Claude Code's semantics); each is
    kept up to OUTPUT_CAP, the rest read and dropped, and the hook runs to its end."""
    command = (
        f"head -c {OUTPUT_CAP * 3} /dev/zero | tr '\\0' o; "
        f"head -c {OUTPUT_CAP * 2} /dev/zero | tr '\\0' e >&2; exit 2"
    )
    result = run_hook(command, "{}", cwd=tmp_path, timeout=20, env=dict(os.environ), sandbox=None)
    assert result.exit_code == 2
    assert result.stdout == "o" * OUTPUT_CAP
    assert result.stderr == "e" * OUTPUT_CAP


def test_a_hook_reads_all_of_a_large_input_and_one_that_reads_none_still_ends(
    tmp_path: Path,
) -> None:
    """The JSON is written while the output is read: more than a pipe holds neither blocks
    the hook nor seri, and a hook that never reads its stdin ends as it would."""
    payload = json.dumps({"tool_input": {"content": "x" * (2 << 20)}})
    env = dict(os.environ)
    read = run_hook("wc -c", payload, cwd=tmp_path, timeout=20, env=env, sandbox=None)
    assert (read.exit_code, read.stdout.strip()) == (0, str(len(payload)))
    ignored = run_hook("echo ignored", payload, cwd=tmp_path, timeout=20, env=env, sandbox=None)
    assert (ignored.exit_code, ignored.stdout, ignored.timed_out) == (0, "ignored\n", False)
    assert ignored.seconds < 5


# The hook runner in a process of its own, which says its peak memory (VmHWM, kB) after
# running `yes` as a hook for the whole of its time limit.
_PEAK_AFTER_YES = """
import os, sys
from pathlib import Path
from seri.io.extensions.hook_runner import run_hook
result = run_hook("yes", "{}", cwd=Path(sys.argv[1]), timeout=3, env=dict(os.environ), sandbox=None)
assert result.timed_out, result
peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
print(int(peak[0].split()[1]), round(result.seconds, 2))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_a_hook_printing_without_end_costs_bounded_memory(tmp_path: Path) -> None:
    """`yes` writes gigabytes in its 3 s; what seri keeps of it is OUTPUT_CAP a stream."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_AFTER_YES, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    peak_kb, seconds = done.stdout.split()
    assert 3 <= float(seconds) < 8
    assert int(peak_kb) < 120 * 1024, f"peak {peak_kb} kB"


@pytest.fixture
def kept_under_tmp() -> Iterator[Path]:
    """A directory of the host's /tmp outside the project (where a checkout made by
    ``mktemp -d`` lands), with a virtual environment of its own: under bubblewrap the
    command's /tmp is a private one."""
    import shutil
    import tempfile

    made = Path(tempfile.mkdtemp(prefix="seri-hooks-", dir="/tmp"))
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(made / "venv")],
        check=True,
        timeout=60,
    )
    try:
        yield made
    finally:
        shutil.rmtree(made, ignore_errors=True)


def test_a_hook_kept_under_tmp_runs_with_its_own_interpreter(
    sandbox: Sandbox | None, tmp_path: Path, kept_under_tmp: Path
) -> None:
    """The hook's script and the interpreter that runs it both live under the host's /tmp:
    the command names them, so the sandbox shows them (read-only) and the hook runs."""
    project = tmp_path / "project"
    project.mkdir()
    script = kept_under_tmp / "hooks" / "echo_tool.py"
    script.parent.mkdir()
    script.write_text(
        "import json, sys\ndata = json.load(sys.stdin)\nprint(sys.prefix, data['tool_name'])\n"
    )
    command = f"{kept_under_tmp}/venv/bin/python {script}"
    result = run_hook(
        command,
        '{"tool_name": "Bash"}',
        cwd=project,
        timeout=20,
        env=dict(os.environ),
        sandbox=sandbox,
    )
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == f"{kept_under_tmp}/venv Bash\n"


def test_what_a_hook_is_shown_under_tmp_it_cannot_write(
    sandbox: Sandbox | None, tmp_path: Path, kept_under_tmp: Path
) -> None:
    """Shown is read-only: a sandboxed hook that names a directory under /tmp reads it and
    neither adds a file there nor changes one."""
    if sandbox is None or sandbox.kind == "none":
        pytest.skip("outside any OS sandbox a hook writes what its user may")
    (kept_under_tmp / "kept.txt").write_text("kept\n")
    command = (
        f"cat {kept_under_tmp}/kept.txt; echo new > {kept_under_tmp}/new.txt; "
        f"echo changed > {kept_under_tmp}/kept.txt; true"
    )
    result = run_hook(
        command, "{}", cwd=tmp_path, timeout=20, env=dict(os.environ), sandbox=sandbox
    )
    assert result.stdout == "kept\n"
    assert not (kept_under_tmp / "new.txt").exists()
    assert (kept_under_tmp / "kept.txt").read_text() == "kept\n"
