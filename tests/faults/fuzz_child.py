"""Run seri's command line once per request, each time in a fresh fork: fuzzing at the
speed of seri's own work rather than of interpreter start-ups.

    python fuzz_child.py

Reads one JSON object a line on stdin: ``{"argv": [...], "env": {...}, "cwd": DIR,
"stdin": TEXT}``; answers one a line on stdout: ``{"status": N, "stderr": TEXT, "stdout":
TEXT}``. Each case runs ``seri.commands.main.main(argv)`` in a child forked from this
process, with exactly that environment (plus nothing else), working directory and standard
input: a real, separate process running the real program, as ``seri`` would.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from forked_seri import preload, read_output, run_seri


def _run(case: dict[str, Any], out: Path) -> int:
    source = out / "stdin"
    source.write_bytes(case.get("stdin", "").encode("utf-8", "surrogatepass"))
    pid = os.fork()
    if pid == 0:
        run_seri(
            case["argv"],
            out=out / "run",
            stdin=source,
            env=case["env"],
            replace_env=True,
            cwd=case["cwd"],
            tag="fuzz_child",
        )
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def main() -> int:
    preload()
    out = Path(tempfile.mkdtemp(prefix="seri-fuzz-"))
    for line in sys.stdin:
        case = json.loads(line)
        status = _run(case, out)
        answer = {
            "status": status,
            "stdout": read_output(out / "run", "stdout"),
            "stderr": read_output(out / "run", "stderr"),
        }
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
