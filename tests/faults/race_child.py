"""Race real seri processes against each other, round after round, cheaply.

    python race_child.py SPEC.json

SPEC is ``{"rounds": N, "seed": S, "cwd": DIR, "out": DIR, "max_delay": SECONDS,
"first": [ARGS...], "second": [ARGS...], "second_env": {...}}`` (ARGS may hold
``{round}``; ``second_env`` is set in the second child's environment only). Each round forks
two children: the first runs ``seri FIRST``, the second ``seri SECOND`` after a random delay
(0 to ``max_delay`` s, from the seed), both at once. One round in five is late: its
delay reaches to four times ``max_delay`` or, when longer, to two and a half times how long
the first children have been taking (the median so far, fork to exit), so that a late second
child lands before, at and after the first's end whatever the machine's load: taking over a
lease just given back is raced every run, however few its rounds. Each child is a real,
separate process (its own pid and start time, so its own lease) running seri's command line
(``seri.commands.main.main``) from a fresh fork of this interpreter, which has the modules
imported already: a round costs what seri's work costs, not two interpreter start-ups.

Prints one JSON object: per round, both children's pids, exit statuses and stderr.
The environment (SERI_HOME, SERI_BASE_URL, the key) is this process's own.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from forked_seri import preload, read_output, run_seri


def _fork(args: list[str], out: Path, delay: float, env: dict[str, str]) -> int:
    pid = os.fork()
    if pid == 0:
        run_seri(args, out=out, env=env, delay=delay, tag="race_child")
    return pid


def main() -> int:
    spec: dict[str, Any] = json.loads(Path(sys.argv[1]).read_text())
    preload()
    os.chdir(spec["cwd"])
    out = Path(spec["out"])
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(spec["seed"])
    rounds = []
    first_runs: list[float] = []  # how long each first child took, fork to exit
    started = time.monotonic()
    for number in range(spec["rounds"]):
        first = [a.replace("{round}", str(number)) for a in spec["first"]]
        second = [a.replace("{round}", str(number)) for a in spec["second"]]
        # Mostly within the first's run (the race); one round in five well after its start, up
        # to past its end on this machine as loaded now, so that taking over a lease just
        # given back is raced too (a fixed reach is all inside the run when the machine is busy).
        late = rng.random() < 0.2
        reach = spec["max_delay"]
        if late:
            reach = max(4 * reach, 2.5 * statistics.median(first_runs or [0.0]))
        delay = rng.uniform(0, 1) * reach
        names = [out / f"r{number}-a", out / f"r{number}-b"]
        forked_at = time.monotonic()
        pids = [
            _fork(first, names[0], 0.0, {}),
            _fork(second, names[1], delay, spec.get("second_env", {})),
        ]
        statuses = [os.waitstatus_to_exitcode(os.waitpid(pids[0], 0)[1])]
        first_runs.append(time.monotonic() - forked_at)
        statuses.append(os.waitstatus_to_exitcode(os.waitpid(pids[1], 0)[1]))
        rounds.append(
            {
                "delay": round(delay, 4),
                "children": [
                    {
                        "pid": pid,
                        "status": status,
                        "stdout": read_output(name, "stdout"),
                        "stderr": read_output(name, "stderr"),
                    }
                    for pid, status, name in zip(pids, statuses, names, strict=True)
                ],
            }
        )
    print(json.dumps({"rounds": rounds, "seconds": time.monotonic() - started}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
