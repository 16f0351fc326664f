"""What hooks cost: nothing when none is configured, and how much five hooks a call add.

    .venv/bin/python -m scripts.bench.hooks [--runs N] [--base COMMIT]

1. Start-up with no hook and no skill configured, A/B against ``--base`` (main): `seri
   --version` (to exit) and `seri chat -p` (to the first byte of its answer, against the
   loopback model), the same interpreter for both trees, runs interleaved; and which of
   seri's hook and skill modules a `seri chat -p` without hooks imports (none should be).
2. A `seri chat -p` task of 10 tool calls (11 model calls), whole, with no hook and with
   five PreToolUse hooks on every call (`true`, a trivial bash command), each in the OS
   sandbox (bubblewrap where it is installed) and outside it (``"sandbox": false``): the
   wall time per hook run is what remains after the no-hook run is taken away.

Writes bench-results/hooks.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.common import PYTHON, RESULTS, log
from scripts.bench.otlp_chat import ENTRY, KEY, _clean_env, startup
from scripts.fake_model import FakeModel

CALLS = 10
HOOKS_PER_CALL = 5
# Modules that only a session with hooks or skills needs (what every start loads to find
# out whether there are any is seri.pure.extensions.hook_events, seri.pure.extensions.hook_points,
# seri.runtime.extensions.hook_start, seri.runtime.extensions.skill_catalogue and
# seri.io.extensions.skill_scan).
HOOK_MODULES = (
    "seri.pure.extensions.hooks",
    "seri.pure.extensions.hook_decisions",
    "seri.runtime.extensions.hook_host",
    "seri.io.extensions.hook_runner",
    "seri.pure.extensions.skills",
    "seri.pure.extensions.skill_frontmatter",
    "seri.pure.permissions.trust",
    "seri.io.mcp.mcp_approvals",
)


def _task() -> list[dict[str, Any]]:
    calls = [
        {"tool_calls": [{"id": f"c{n}", "name": "glob", "arguments": {"pattern": "*"}}]}
        for n in range(CALLS)
    ]
    return [*calls, {"text": "done"}]


def _hooks(sandbox: bool) -> dict[str, Any]:
    hook = {"type": "command", "command": "true", **({} if sandbox else {"sandbox": False})}
    return {"PreToolUse": [{"matcher": "Glob", "hooks": [hook] * HOOKS_PER_CALL}]}


def imported_without_hooks() -> list[str]:
    """The hook and skill modules a `seri chat -p` without any imports (should be none)."""
    probe = (
        "import sys, atexit\n"
        f"atexit.register(lambda: print(sorted(m for m in sys.modules if m in {HOOK_MODULES!r}),"
        " file=sys.stderr))\n"
        f"{ENTRY}\n"
    )
    with tempfile.TemporaryDirectory() as tmp_text, FakeModel() as fake:
        tmp = Path(tmp_text)
        fake.script({"text": "ok"})
        env = _clean_env(
            SERI_HOME=str(tmp / "home"),
            SERI_BASE_URL=fake.base_url,
            SERI_MODEL="fake/model",
            OPENROUTER_API_KEY=KEY,
        )
        done = subprocess.run(
            [PYTHON, "-c", probe, "chat", "-p", "say ok"],
            env=env,
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        )
    last = done.stderr.strip().splitlines()[-1]
    return list(json.loads(last.replace("'", '"')))


def with_hooks(runs: int) -> dict[str, float]:
    """Whole runs (ms, medians) per configuration."""
    configurations = {
        "no hooks": None,
        f"{HOOKS_PER_CALL} hooks a call, in the sandbox": _hooks(sandbox=True),
        f"{HOOKS_PER_CALL} hooks a call, outside it": _hooks(sandbox=False),
    }
    walls: dict[str, list[float]] = {}
    homes = itertools.count()
    with tempfile.TemporaryDirectory() as tmp_text, FakeModel() as fake:
        tmp = Path(tmp_text)
        project = tmp / "project"
        project.mkdir()
        for round_ in range(runs + 1):
            for name, hooks in configurations.items():
                # A profile per run: each starts as a first run in a directory would.
                home = tmp / f"home-{next(homes)}"
                home.mkdir()
                if hooks is not None:
                    (home / "config.json").write_text(json.dumps({"hooks": hooks}))
                env = _clean_env(
                    SERI_HOME=str(home),
                    SERI_BASE_URL=fake.base_url,
                    SERI_MODEL="fake/model",
                    OPENROUTER_API_KEY=KEY,
                )
                fake.script(*_task())
                started = time.perf_counter()
                done = subprocess.run(
                    [PYTHON, "-c", ENTRY, "chat", "-p", "look"],
                    env=env,
                    cwd=project,
                    capture_output=True,
                    text=True,
                    check=False,
                )
                took = time.perf_counter() - started
                if done.returncode != 0:
                    raise RuntimeError(f"{name}: exit {done.returncode}: {done.stderr}")
                ran = done.stderr.count("seri: hook PreToolUse")
                expected = 0 if hooks is None else CALLS * HOOKS_PER_CALL
                if ran != expected:
                    raise RuntimeError(f"{name}: {ran} hook runs, not {expected}")
                if round_:
                    walls.setdefault(name, []).append(took * 1000)
    return {name: statistics.median(values) for name, values in walls.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--base", default="main")
    args = parser.parse_args()
    log(f"start-up without hooks, A/B against {args.base}")
    starts = startup(args.runs, args.base)
    loaded = imported_without_hooks()
    log(f"a task of {CALLS} tool calls with {HOOKS_PER_CALL} hooks a call")
    runs = with_hooks(max(3, args.runs // 2))
    lines = [
        "# Hooks: what they cost",
        "",
        f"Start-up with no hook and no skill configured, medians of {args.runs} interleaved "
        "runs, the same interpreter for both trees (`seri chat -p`: to the first byte of the "
        "answer on stdout, against the loopback model; the others: to exit); wall time, then "
        f"CPU time. Base: `{args.base}`.",
        "",
        "| command | base | this tree | difference |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| {name} | {row['main']:.1f} ms | {row['branch']:.1f} ms | "
        f"{row['branch'] - row['main']:+.1f} ms |"
        for name, row in starts.items()
    ]
    lines += [
        "",
        f"Hook and skill modules a `seri chat -p` without hooks imported: {loaded or 'none'}.",
        "",
        f"`seri chat -p`, a task of {CALLS} tool calls ({CALLS + 1} model calls, loopback "
        f"model), whole run, medians of {max(3, args.runs // 2)} runs each, interleaved; "
        f"{HOOKS_PER_CALL} PreToolUse hooks (`true`) on every call, {CALLS * HOOKS_PER_CALL} "
        "hook runs a task:",
        "",
        "| hooks | whole run | added | per hook run |",
        "| --- | --- | --- | --- |",
    ]
    base = runs["no hooks"]
    for name, wall in runs.items():
        added = wall - base
        per = added / (CALLS * HOOKS_PER_CALL) if name != "no hooks" else 0.0
        lines.append(f"| {name} | {wall:.0f} ms | {added:+.0f} ms | {per:.1f} ms |")
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hooks.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
