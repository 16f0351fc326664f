"""Issue 27's speed target: running a goal's check adds no more than the command's own time
plus 20 ms. `python -m scripts.bench.goal_check`

Each command is run RUNS times (after one warm-up) two ways, in pairs, the order within a
pair alternating:

- alone: `bash -c CMD` in the project, from this process, with this process's environment
  (what the person's own shell would run);
- as a goal's check: the project's file digest (the stall rule's), then the command through
  `run_bash` in the OS sandbox seri would pick here (SERI_SANDBOX, as a session opens it),
  with the environment without secrets, its output redacted: the same calls
  ``seri.runtime.agent.goal_session`` makes, through the session's workbench.

Pairs, not blocks: on a machine others share, the load moves over the seconds a block of
runs takes (a one-test pytest block is half a minute), and a difference of two blocks'
medians measured that drift as much as seri. "added" is the median of the pairs'
differences, with a distribution-free 95% interval; the verdict is "ok" or "OVER" only where
the interval says so, else "within the noise". Wall time is what the target is about; CPU
time (user + system) is reported beside it, with the load averages around each command (on
a virtual machine CPU time moves with the host's load too, which no load average shows):

- wall: from the call to its return (a check ends when its output has closed);
- CPU: this process's own (seri's side of a check: the digest, the sandbox's plan, starting
  the process, reading and redacting its output) plus every process the command was, reaped
  after the wall time stops. This process is a child subreaper for that: bubblewrap's first
  process in its pid namespace is left behind by the bubblewrap that waits on it, and its CPU
  would otherwise go uncounted.

Both ways run the command inside bash's `time` (``timed``), so the added wall time splits
into what is spent around the command (seri, the sandbox's start and end) and the difference
in the command's own time: a 1.5 s command varies by more than 20 ms from run to run here,
what is around it does not.

A second table splits the sandbox's own start from seri's: the bubblewrap command line seri
builds, run by `subprocess.run` with nothing of seri around it, against `bash -c true`.

The project is a generated one (PROJECT_FILES files) and, with SERI_TREE=path, any tree (a
second look at an unchanged tree is what every check after the first pays). Writes
bench-results/goal_check.md.
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from seri.io.agent.tree_state import TreeState
from seri.io.permissions.sandbox import Sandbox
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
_PR_SET_CHILD_SUBREAPER = 36

# The line bash's `time` prints after the command, inside either way of running it.
TIME_MARK = "goal-check-bench-own-time"
_OWN_TIME = re.compile(TIME_MARK + r" ([0-9.]+)")
# One run: (wall seconds, CPU seconds of the whole run, CPU seconds of this process's own,
# the command's own wall seconds as bash inside timed it, NaN where it was not timed).
Sample = tuple[float, float, float, float]


def make_project(root: Path, files: int) -> None:
    (root / "pkg").mkdir(parents=True)
    for n in range(files):
        (root / "pkg" / f"mod_{n}.py").write_text(f"VALUE_{n} = {n}\n" * 40)
    (root / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def load() -> str:
    return " / ".join(f"{value:.2f}" for value in os.getloadavg())


def become_subreaper() -> None:
    """Orphans of the commands run here (bubblewrap's pid 1) are reparented to this process,
    so their CPU time is counted once they are reaped."""
    if sys.platform.startswith("linux"):  # elsewhere no sandbox leaves a process behind
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def reap_all() -> None:
    while True:
        try:
            os.wait4(-1, 0)
        except ChildProcessError:
            return


def timed(command: str) -> str:
    """``command`` with bash's ``time`` around it: the same two words either way it runs, so
    the time it took itself is told apart from the time spent around it."""
    return f"TIMEFORMAT='{TIME_MARK} %3R'; time {{ {command}\n}}"


def measured(run: Callable[[], str]) -> Sample:
    """Wall time until ``run`` returns; CPU time once everything it started has been reaped;
    the command's own time from what it printed."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = time.process_time()
    started = time.perf_counter()
    output = run()
    wall = time.perf_counter() - started
    own = time.process_time() - own
    reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    spent = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime)
    return wall, spent + own, own, own_time(output)


def own_time(output: str) -> float:
    """The command's own wall seconds as ``timed`` printed them (NaN: not timed)."""
    times = _OWN_TIME.findall(output)
    return float(times[-1]) if times else math.nan


def alone(command: str, cwd: Path) -> Callable[[], str]:
    def run() -> str:
        done = subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, check=False)
        return (done.stdout + done.stderr).decode("utf-8", "replace")

    return run


def as_seri_check(project: Path) -> tuple[Callable[[str], Callable[[], str]], Sandbox]:
    """The check as a goal runs it, set up once as a session sets it up."""
    from seri.io.tools.shell import run_bash

    home = os.path.expanduser("~")
    protected = protected_paths(os.path.realpath(tempfile.gettempdir()), home)
    sandbox = open_sandbox(str(project), protected, os.environ)
    env = child_environment(os.environ, KEY_VARIABLES)
    redactor = Redactor.of(())
    tree = TreeState(project)

    def check(command: str) -> Callable[[], str]:
        def run() -> str:
            look = tree.look_for_check()
            result = run_bash(command, cwd=project, timeout=600, sandbox=sandbox, env=env)
            look()
            return redactor.text(result.text)

        return run

    return check, sandbox


def sandbox_start(sandbox: Sandbox, project: Path) -> Row | None:
    """``bash -c true`` as bubblewrap starts it for seri, with nothing of seri around it (the
    stand-ins its read-only binds need are placed once, outside the time), against ``bash -c
    true`` alone. None under Landlock or none, whose start is seri's own pre-exec hook."""
    if sandbox.kind != "bubblewrap":
        return None
    env = child_environment(os.environ, KEY_VARIABLES)
    before = load()
    with sandbox.confined("true", project, env) as (argv, _, child_env):

        def bare() -> str:
            subprocess.run(argv, cwd=project, capture_output=True, env=child_env, check=False)
            return ""

        runs = pairs(alone("true", project), bare)
    return summary("bubblewrap", runs, before)


def pairs(first: Callable[[], str], second: Callable[[], str]) -> list[tuple[Sample, Sample]]:
    """RUNS pairs of (first, second), the order within a pair alternating."""
    measured(first), measured(second)  # warm-up
    out = []
    for n in range(RUNS):
        if n % 2:
            b, a = measured(second), measured(first)
        else:
            a, b = measured(first), measured(second)
        out.append((a, b))
    return out


def median_interval(values: list[float]) -> tuple[float, float]:
    """A distribution-free 95% confidence interval of the median of ``values``: the order
    statistics j and n-j+1 with j the largest where two binomial(n, 1/2) tails up to j-1
    stay within 5% (with 15 values, the 4th and the 12th: 96.5%). Fewer than 6 values:
    their whole range."""
    ordered = sorted(values)
    n = len(ordered)
    j, tail = 0, 0.0
    while True:
        tail += math.comb(n, j) / 2**n
        if 2 * tail > 0.05:
            break
        j += 1
    if j == 0:
        return ordered[0], ordered[-1]
    return ordered[j - 1], ordered[n - j]


@dataclasses.dataclass(frozen=True)
class Added:
    """What the second way of a pair adds to the first, ms: the median of the pairs'
    differences and its 95% confidence interval."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, differences: list[float]) -> Added:
        low, high = median_interval(differences)
        return cls(ms(statistics.median(differences)), ms(low), ms(high))

    def __str__(self) -> str:
        return f"{self.median} [{self.low}, {self.high}]"

    def verdict(self) -> str:
        """Against the target: "ok" or "OVER" where the interval says so either way;
        otherwise the difference is within this machine's noise (more RUNS or a quieter
        machine resolves it)."""
        if self.high <= TARGET_MS:
            return "ok"
        if self.low > TARGET_MS:
            return "OVER"
        return "within the noise"


@dataclasses.dataclass(frozen=True)
class Row:
    label: str
    # Medians, ms: (alone, as seri runs it).
    wall: tuple[float, float]
    cpu: tuple[float, float]
    added_wall: Added
    # The added wall time split: around the command (seri and the sandbox's start and end),
    # and the command's own time in the check less alone (None: not timed).
    around: Added | None
    itself: Added | None
    added_cpu: Added
    # The median CPU time of seri's own process in a check, ms.
    seri_cpu: float
    load: str

    def verdict(self) -> str:
        """The added wall time's; where the command's own time is too noisy for it, what
        is spent around the command is judged too."""
        said = self.added_wall.verdict()
        if said == "within the noise" and self.around is not None:
            said += f" (around the command: {self.around.verdict()})"
        return said


def summary(label: str, runs: list[tuple[Sample, Sample]], load_before: str) -> Row:
    def median(pick: Callable[[tuple[Sample, Sample]], float]) -> float:
        return ms(statistics.median(pick(pair) for pair in runs))

    untimed = any(math.isnan(a[3]) or math.isnan(b[3]) for a, b in runs)
    return Row(
        label,
        wall=(median(lambda p: p[0][0]), median(lambda p: p[1][0])),
        cpu=(median(lambda p: p[0][1]), median(lambda p: p[1][1])),
        added_wall=Added.of([b[0] - a[0] for a, b in runs]),
        around=None if untimed else Added.of([(b[0] - b[3]) - (a[0] - a[3]) for a, b in runs]),
        itself=None if untimed else Added.of([b[3] - a[3] for a, b in runs]),
        added_cpu=Added.of([b[1] - a[1] for a, b in runs]),
        seri_cpu=median(lambda p: p[1][2]),
        load=f"{load_before} → {load()}",
    )


def report(
    kind: str, files: int, looks: tuple[float, float], rows: list[Row], split: Row | None
) -> str:
    lines = [
        f"# A goal's check: what seri adds to the command ({RUNS} pairs)",
        "",
        f"Sandbox: {kind}. Project: {files} files; the file digest's first look "
        f"{ms(looks[0])} ms, each later look {ms(looks[1])} ms. Machine: {os.cpu_count()} "
        "cores. Times are medians; an added time is the median of the pairs' differences "
        "[its 95% confidence interval]. Each way runs the command inside bash's `time`, "
        "which splits the added wall time into the time spent around the command and the "
        "difference in the command's own time. Load averages (1 / 5 / 15 min) before → "
        "after.",
        "",
        "| command | alone: wall, CPU (ms) | as a goal's check: wall, CPU (ms) | added wall "
        "(ms) | of it around the command (ms) | of it the command's own time (ms) | added CPU "
        "(ms) | seri's own CPU (ms) | ≤ 20 ms | load |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    lines.extend(
        f"| `{row.label}` | {row.wall[0]}, {row.cpu[0]} | {row.wall[1]}, {row.cpu[1]} | "
        f"{row.added_wall} | {row.around or '—'} | {row.itself or '—'} | {row.added_cpu} | "
        f"{row.seri_cpu} | {row.verdict()} | {row.load} |"
        for row in rows
    )
    if split is not None:
        lines += [
            "",
            "The sandbox's own start, seri aside: the bubblewrap command line seri builds, "
            "running `true`, against `bash -c true`:",
            "",
            "| | `bash -c true`: wall, CPU (ms) | bubblewrap `true`: wall, CPU (ms) | added wall "
            "(ms) | added CPU (ms) | load |",
            "| --- | --- | --- | --- | --- | --- |",
            f"| bubblewrap | {split.wall[0]}, {split.cpu[0]} | {split.wall[1]}, {split.cpu[1]} "
            f"| {split.added_wall} | {split.added_cpu} | {split.load} |",
        ]
    return "\n".join(lines) + "\n"


def digest_looks(project: Path) -> tuple[float, float]:
    tree = TreeState(project)
    started = time.perf_counter()
    tree.digest()
    first = time.perf_counter() - started
    later = []
    for _ in range(RUNS):
        started = time.perf_counter()
        tree.digest()
        later.append(time.perf_counter() - started)
    return first, statistics.median(later)


def main() -> int:
    become_subreaper()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(os.environ["SERI_TREE"]) if os.environ.get("SERI_TREE") else Path(tmp)
        if not os.environ.get("SERI_TREE"):
            make_project(project, PROJECT_FILES)
        check, sandbox = as_seri_check(project)
        looks = digest_looks(project)
        rows = []
        for command in COMMANDS:
            before = load()
            runs = pairs(alone(timed(command), project), check(timed(command)))
            rows.append(summary(command, runs, before))
        split = sandbox_start(sandbox, project)
        files = TreeState(project)
        files.digest()
        text = report(sandbox.kind, files.files_seen, looks, rows, split)
        sandbox.close()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)
    return 1 if any(row.added_wall.verdict() == "OVER" for row in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
