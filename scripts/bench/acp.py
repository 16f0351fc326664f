"""What `seri acp` costs: spawn to the initialize answer, and each session/update it sends.

    .venv/bin/python scripts/bench/acp.py [--runs 15] [--updates 20000]

Start-up: `seri acp` spawned RUNS times, an initialize written at once, the wall time until
its answer's line is read (the issue's target: 150 ms). Per update: an ``AcpFront`` sending
``agent_message_chunk`` updates (a 4-character piece, as providers stream) through the real
``Connection`` into a pipe a thread drains, the wall time per update.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from seri.runtime.acp.acp_connection import Connection
from seri.runtime.acp.acp_front import AcpFront

SERI = str(Path(sys.executable).with_name("seri"))
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}


def startup(runs: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "SERI_HOME": home}
        for _ in range(runs):
            started = time.perf_counter()
            proc = subprocess.Popen(
                [SERI, "acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
            )
            assert proc.stdin is not None
            assert proc.stdout is not None
            proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
            proc.stdin.flush()
            assert b'"result"' in proc.stdout.readline()
            times.append(time.perf_counter() - started)
            proc.stdin.close()
            proc.wait()
    return times


def per_update(count: int) -> float:
    read_fd, write_fd = os.pipe()
    with (
        open(read_fd, "rb") as reader,
        open(write_fd, "wb") as writer,
        open(os.devnull, "rb") as nothing,
    ):
        threading.Thread(target=reader.read, daemon=True).start()
        front = AcpFront(Connection(nothing, writer), "/project")
        front.session_id = "0" * 32
        started = time.perf_counter()
        for _ in range(count):
            front.model_text("abcd")
        elapsed = time.perf_counter() - started
    return elapsed / count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--updates", type=int, default=20000)
    options = parser.parse_args()
    times = startup(options.runs)
    each = per_update(options.updates)
    load = os.getloadavg()[0]
    print(f"| measure | value (load average {load:.1f} on {os.cpu_count()} cores) |")
    print("|---|---|")
    median = statistics.median(times) * 1000
    print(f"| spawn to initialize answer, median of {options.runs} | {median:.0f} ms |")
    print(f"| spawn to initialize answer, best | {min(times) * 1000:.0f} ms |")
    print(f"| one agent_message_chunk update, mean of {options.updates} | {each * 1e6:.1f} µs |")


if __name__ == "__main__":
    main()
