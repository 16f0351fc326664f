"""The compaction matrix as a table: real session x window x tokenizer density.

Runs tests/e2e/test_compaction_real.py with SERI_MATRIX_OUT set (each case writes one JSON
line), then renders bench-results/compaction-matrix.md: for every case whether it finished,
the history before (the imported transcript, as the provider counts it) and after compaction
(the history the next task's request carried), the summarizer calls, the payloads the shrink
ladder elided and the requests the provider refused.

    python -m scripts.bench.compaction_matrix      (or: make compaction-matrix)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from scripts.bench.common import PYTHON, REPO, RESULTS, log

TEST = "tests/e2e/test_compaction_real.py"


def collect() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "matrix.jsonl"
        env = {**os.environ, "SERI_MATRIX_OUT": str(out)}
        log(f"running {TEST}")
        done = subprocess.run(
            [PYTHON, "-m", "pytest", "-q", "-n", "2", "-p", "no:randomly", TEST],
            cwd=REPO,
            env=env,
            check=False,
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    if done.returncode != 0:
        log(f"the matrix test failed (exit {done.returncode}); the table shows what ran")
    return sorted(rows, key=lambda r: (r["session"], r["window"], r["ratio"]))


def render(rows: list[dict[str, Any]]) -> str:
    lines = [
        "# Compaction on real sessions: session × window × tokenizer density",
        "",
        "Tokens are the provider's (the loopback fake counting `ratio` × ceil(chars/4) plus "
        "the chat template's framing). *Before*: the imported transcript; *after*: the history "
        "the next task's request carried, after `seri chat -p continue`, `/compact` and `seri "
        "compact`. *Calls*: summarizer requests over the four commands.",
        "",
        "| session | window | ratio | overflow wording | finished | tokens before → after "
        "| summarizer calls | compactions | elided | refused |",
        "| --- | ---: | ---: | --- | --- | --- | ---: | ---: | ---: | ---: |",
    ]
    lines.extend(
        f"| {r['session']} | {r['window'] // 1000}k | {r['ratio']}× | {r['style']} "
        f"| {'yes' if r['finished'] else 'NO'} "
        f"| {r['history_before']:,} → {r['history_after']:,} | {r['summarizer_calls']} "
        f"| {r['compactions']} | {r['elided']} | {r['refused']} |"
        for r in rows
    )
    finished = sum(1 for r in rows if r["finished"])
    lines += ["", f"{finished} of {len(rows)} cases finished."]
    return "\n".join(lines) + "\n"


def main() -> int:
    rows = collect()
    RESULTS.mkdir(exist_ok=True)
    text = render(rows)
    (RESULTS / "compaction-matrix.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    return 0 if rows and all(r["finished"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
