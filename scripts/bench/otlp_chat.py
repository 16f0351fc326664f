"""What live OTLP export costs a real `seri chat -p`, and what it costs when it is off.

    .venv/bin/python -m scripts.bench.otlp_chat [--runs N]

1. Start-up with export off, A/B: `seri --version`, `seri sessions` (wall to exit) and
   `seri chat -p` (wall to the first byte of its answer on stdout, against the loopback
   model) in this tree and in `main` (each checked out into a temporary directory), the
   same interpreter for both, runs interleaved.
2. A `seri chat -p` task of three model calls and two tool calls, whole, with export off and
   with export on to a collector that answers at once, that never answers (a black hole:
   it accepts the connection and reads, nothing more) and that refuses connections; how
   many warning lines each printed.

Writes bench-results/otlp-chat.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.common import PYTHON, REPO, RESULTS, log
from scripts.bench.otlp import Sink
from scripts.fake_model import FakeModel
from tests.otlp_receiver import BlackHole, refused_endpoint

ENTRY = "import sys; from seri.commands.main import main; sys.exit(main())"
KEY = "sk-bench-0000"


def _tree(tmp: Path, name: str, commit: str) -> Path:
    """``commit``'s seri/ in a directory of its own under ``tmp``. Both sides of an A/B are
    laid out alike: importing from the work tree's disk and from a temporary directory
    differ by tens of milliseconds of wall time on their own."""
    archive = subprocess.run(
        ["git", "archive", commit, "seri"], cwd=REPO, capture_output=True, check=True
    )
    tree = tmp / name
    tree.mkdir()
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def _this_tree() -> str:
    """A commit of the work tree as it is (uncommitted changes included), or HEAD."""
    stashed = subprocess.run(
        ["git", "stash", "create"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    return stashed or "HEAD"


def _clean_env(**extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SERI_", "OTEL_")) and key != "OPENROUTER_API_KEY"
    }
    env.update(extra)
    return env


def _first_byte(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Seconds to the first byte on stdout, and to the process's exit."""
    started = time.perf_counter()
    child = subprocess.Popen(
        [PYTHON, "-c", ENTRY, *argv],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert child.stdout is not None
    first = child.stdout.read(1)
    at_first = time.perf_counter() - started
    child.stdout.read()
    code = child.wait()
    if code != 0:
        raise RuntimeError(f"{argv} exited {code}")
    return at_first if first else float("nan"), time.perf_counter() - started


def startup(runs: int, base: str) -> dict[str, dict[str, float]]:
    """Medians in ms: (command, tree) -> first byte (chat) or exit (the others)."""
    found: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp_text, FakeModel() as fake:
        tmp = Path(tmp_text)
        trees = {"main": _tree(tmp, "base", base), "branch": _tree(tmp, "branch", _this_tree())}
        project = tmp / "project"
        project.mkdir()
        commands = {
            "seri --version": ["--version"],
            "seri sessions": ["sessions"],
            "seri chat -p (first byte)": ["chat", "-p", "say ok"],
        }
        for round_ in range(runs + 1):
            for name, argv in commands.items():
                # Which tree goes first alternates: on a busy machine the order shows.
                order = list(trees.items())
                for tree_name, tree in order if round_ % 2 else order[::-1]:
                    # Each tree its own profile: their schemas may differ.
                    env = _clean_env(
                        PYTHONPATH=str(tree),
                        SERI_HOME=str(tmp / f"home-{tree_name}"),
                        SERI_BASE_URL=fake.base_url,
                        SERI_MODEL="fake/model",
                        OPENROUTER_API_KEY=KEY,
                        SERI_SANDBOX="none",
                    )
                    if argv[0] == "chat":
                        fake.script({"text": "ok"})
                    cpu_before = _children_cpu()
                    first, whole = _first_byte(argv, env, project)
                    cpu = _children_cpu() - cpu_before
                    if argv[0] != "chat":
                        first = whole
                    if round_:  # the first round writes bytecode caches and the profile
                        found.setdefault((name, tree_name), []).append(first * 1000)
                        found.setdefault((f"{name} CPU", tree_name), []).append(cpu * 1000)
    return {
        name: {tree: statistics.median(found[(name, tree)]) for tree in ("main", "branch")}
        for name in sorted({name for name, _ in found}, key=lambda n: (n.endswith("CPU"), n))
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _task() -> list[dict[str, Any]]:
    def call(id_: str, name: str, **arguments: Any) -> dict[str, Any]:
        return {"id": id_, "name": name, "arguments": arguments}

    return [
        {"tool_calls": [call("c1", "glob", pattern="*")]},
        {"tool_calls": [call("c2", "read_file", path="a.txt")]},
        {"text": "done"},
    ]


def export_on(runs: int) -> dict[str, dict[str, float]]:
    """Whole `seri chat -p` runs (ms, medians) and warning lines, per collector."""
    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    hole = BlackHole()
    collectors = {
        "export off": "",
        "collector answering 200": f"http://127.0.0.1:{sink.server_address[1]}",
        "black hole (accepts, never answers)": hole.endpoint,
        "connection refused": refused_endpoint(),
    }
    walls: dict[str, list[float]] = {}
    answers: dict[str, list[float]] = {}
    warnings: dict[str, list[int]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp_text, FakeModel() as fake:
            tmp = Path(tmp_text)
            project = tmp / "project"
            project.mkdir()
            (project / "a.txt").write_text("hello\n")
            for round_ in range(runs + 1):
                for name, endpoint in collectors.items():
                    extra = {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint} if endpoint else {}
                    env = _clean_env(
                        SERI_HOME=str(tmp / "home"),
                        SERI_BASE_URL=fake.base_url,
                        SERI_MODEL="fake/model",
                        OPENROUTER_API_KEY=KEY,
                        SERI_SANDBOX="none",
                        **extra,
                    )
                    fake.script(*_task())
                    started = time.perf_counter()
                    child = subprocess.Popen(
                        [PYTHON, "-c", ENTRY, "chat", "--allow", "read_file", "-p", "look"],
                        env=env,
                        cwd=project,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                    assert child.stdout is not None
                    child.stdout.readline()
                    answered = time.perf_counter() - started
                    _, stderr = child.communicate()
                    took = time.perf_counter() - started
                    if child.returncode != 0:
                        raise RuntimeError(f"{name}: exit {child.returncode}: {stderr}")
                    if round_:
                        walls.setdefault(name, []).append(took * 1000)
                        answers.setdefault(name, []).append(answered * 1000)
                        said = [line for line in stderr.splitlines() if "telemetry" in line]
                        warnings.setdefault(name, []).append(len(said))
    finally:
        sink.shutdown()
        hole.close()
    return {
        name: {
            "answer_ms": statistics.median(answers[name]),
            "median_ms": statistics.median(walls[name]),
            "max_ms": max(walls[name]),
            "warnings_max": max(warnings[name]),
            "warnings_min": min(warnings[name]),
        }
        for name in collectors
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--base", default="main", help="the commit (or tree) to compare start-up against"
    )
    parser.add_argument("--startup-only", action="store_true")
    args = parser.parse_args()
    log(f"start-up with export off, A/B against {args.base}")
    starts = startup(args.runs, args.base)
    runs: dict[str, dict[str, float]] = {}
    if not args.startup_only:
        log("seri chat -p with export off and on")
        runs = export_on(max(5, args.runs // 2))
    lines = [
        "# OTLP live export in `seri chat`: what it costs",
        "",
        f"Start-up with export off, medians of {args.runs} interleaved runs, the same "
        "interpreter for both trees (`seri chat -p`: to the first byte of the answer on "
        "stdout, against the loopback model; the others: to exit). Wall time, then the "
        "process's CPU time (user + system), which a busy machine disturbs less.",
        "",
        f"Base: `{args.base}`.",
        "",
        "| command | base | this tree | difference |",
        "| --- | --- | --- | --- |",
    ]
    for name, row in starts.items():
        lines.append(
            f"| {name} | {row['main']:.1f} ms | {row['branch']:.1f} ms | "
            f"{row['branch'] - row['main']:+.1f} ms |"
        )
    lines += (
        []
        if not runs
        else [
            "",
            "`seri chat -p` (3 model calls, 2 tool calls, loopback model), whole run, "
            f"{max(5, args.runs // 2)} runs each, interleaved:",
            "",
            "| export | answer on stdout (median) | exit (median) | exit (max) "
            "| telemetry warning lines per run |",
            "| --- | --- | --- | --- | --- |",
        ]
    )
    for name, row in runs.items():
        said = (
            f"{row['warnings_min']}"
            if row["warnings_min"] == row["warnings_max"]
            else f"{row['warnings_min']}–{row['warnings_max']}"
        )
        lines.append(
            f"| {name} | {row['answer_ms']:.0f} ms | {row['median_ms']:.0f} ms "
            f"| {row['max_ms']:.0f} ms | {said} |"
        )
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "otlp-chat.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
