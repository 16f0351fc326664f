"""Issue 27's speed target: running a goal's check adds no more than the command's own time
plus 20 ms. `python -m scripts.bench.goal_check`

For each command, the median of RUNS runs (after one warm-up) of:

- the command alone: `bash -c CMD` from this process (what a shell script's check costs);
- the goal's check as seri runs it: the project's file digest (the stall rule's), then the
  command through `run_bash` in the OS sandbox seri would pick here (SERI_SANDBOX, as a
  session opens it), with the environment without secrets, its output redacted: the same
  calls ``seri.runtime.agent.goal_session`` makes, through the session's workbench.

The project is a generated one (PROJECT_FILES files) and, with SERI_TREE=path, any tree (a
second look at an unchanged tree is what every check after the first pays). Writes
bench-results/goal_check.md.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from seri.io.agent.tree_state import TreeState
from seri.pure.permissions.protected_paths import protected_paths
from seri.pure.trajectories.redaction import Redactor, child_environment
from seri.runtime.session.opening import open_sandbox
from seri.runtime.terminal.chat_options import KEY_VARIABLES

RUNS = int(os.environ.get("RUNS", "15"))
PROJECT_FILES = int(os.environ.get("PROJECT_FILES", "300"))
TARGET_MS = 20.0
COMMANDS = (
    "true",
    "sleep 0.05",
    "python3 -c pass",
    f"{sys.executable} -m pytest -q -p no:cacheprovider test_one.py",
)
OUT = Path(os.environ.get("BENCH_OUT", "bench-results/goal_check.md"))


def make_project(root: Path, files: int) -> None:
    (root / "pkg").mkdir(parents=True)
    for n in range(files):
        (root / "pkg" / f"mod_{n}.py").write_text(f"VALUE_{n} = {n}\n" * 40)
    (root / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


def alone(command: str, cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - started


def as_seri_checks(project: Path) -> tuple[Callable[[str], float], str]:
    """The check as a goal runs it, set up once as a session sets it up."""
    from seri.io.tools.shell import run_bash

    home = os.path.expanduser("~")
    protected = protected_paths(os.path.realpath(tempfile.gettempdir()), home)
    sandbox = open_sandbox(str(project), protected, os.environ)
    env = child_environment(os.environ, KEY_VARIABLES)
    redactor = Redactor.of(())
    tree = TreeState(project)

    def check(command: str) -> float:
        started = time.perf_counter()
        tree.digest()
        result = run_bash(command, cwd=project, timeout=600, sandbox=sandbox, env=env)
        redactor.text(result.text)
        return time.perf_counter() - started

    return check, sandbox.kind


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(os.environ["SERI_TREE"]) if os.environ.get("SERI_TREE") else Path(tmp)
        if not os.environ.get("SERI_TREE"):
            make_project(project, PROJECT_FILES)
        check, kind = as_seri_checks(project)
        tree = TreeState(project)
        started = time.perf_counter()
        tree.digest()
        first_look = time.perf_counter() - started
        looks = []
        for _ in range(RUNS):
            started = time.perf_counter()
            tree.digest()
            looks.append(time.perf_counter() - started)
        rows = []
        for command in COMMANDS:
            alone(command, project), check(command)  # warm-up
            own = [alone(command, project) for _ in range(RUNS)]
            seri = [check(command) for _ in range(RUNS)]
            added = median_ms(seri) - median_ms(own)
            rows.append((command, median_ms(own), median_ms(seri), round(added, 1)))
    files = tree.files_seen
    lines = [
        f"# A goal's check: what seri adds to the command ({RUNS} runs, medians)",
        "",
        f"Sandbox: {kind}. Project: {files} files; the file digest's first look "
        f"{median_ms([first_look])} ms, each later look {median_ms(looks)} ms.",
        "",
        "| command | alone (ms) | as a goal's check (ms) | added (ms) | target |",
        "| --- | --- | --- | --- | --- |",
    ]
    for command, own_ms, seri_ms, added in rows:
        verdict = "ok" if added <= TARGET_MS else "OVER"
        lines.append(
            f"| `{command}` | {own_ms} | {seri_ms} | {added} | ≤ {TARGET_MS:g} ms: {verdict} |"
        )
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)
    return 0 if all(added <= TARGET_MS for *_, added in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
