"""What OTLP export costs: per recorded event with live export on, start-up with it off, and
the import of seri's exporter beside the official SDK's.

    .venv/bin/python -m scripts.bench.otlp [--events N]

Writes bench-results/otlp.md. The SDK is installed into .cache/bench/otel-sdk/ (PyPI:
opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http) on first use, only to time
its import. Start-up is timed A/B: this tree against the merge base with main (checked out
into a temporary directory), the same interpreter for both, runs interleaved.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.common import CACHE, PYTHON, REPO, RESULTS, log
from scripts.bench.data import synthetic_header

SDK_VENV = CACHE / "otel-sdk"
SDK_PACKAGES = ("opentelemetry-sdk==1.45.2", "opentelemetry-exporter-otlp-proto-http==1.45.2")
IMPORT_RUNS = 11
STARTUP_RUNS = 30


class Sink(BaseHTTPRequestHandler):
    """A collector that takes everything and answers 200 at once."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


def _task_records(task: int, at: float) -> list[tuple[Any, float]]:
    """One task as seri records it: three calls, two tools with a checkpoint and an edit."""
    from seri.pure.session.records import Usage
    from seri.pure.trajectories import events, tool_events

    usage = Usage(
        input_tokens=12_000 + task,
        output_tokens=300,
        cached_tokens=11_000,
        cost=0.0042,
        provider="Anthropic",
    )
    out: list[tuple[Any, float]] = []
    for turn in range(3):
        out.append(
            (
                events.ModelCall(
                    finish_reason="tool_calls",
                    usage=usage,
                    tool_calls=1,
                    model="anthropic/claude-sonnet-4.5",
                    generation_id=f"gen-{task}-{turn}",
                ),
                at,
            )
        )
        if turn < 2:
            call = f"call_{task}_{turn}"
            arguments = {"path": "src/a.py", "old_string": "x" * 200, "new_string": "y" * 200}
            out += [
                (
                    tool_events.ToolCallEvent(
                        id=call, name="edit", arguments=json.dumps(arguments)
                    ),
                    at + 0.01,
                ),
                (
                    tool_events.CheckpointEvent(
                        tool="edit", path="src/a.py", existed=True, bytes=4000, sha256="ab" * 32
                    ),
                    at + 0.02,
                ),
                (
                    tool_events.Edit(
                        tool="edit",
                        details=(
                            ("outcome", "applied"),
                            ("path", "src/a.py"),
                            ("bytes", 4000),
                            ("replacements", 1),
                        ),
                    ),
                    at + 0.03,
                ),
                (
                    tool_events.ToolResult(
                        id=call,
                        name="edit",
                        ok=True,
                        interrupted=False,
                        bytes=40,
                        text="Edited src/a.py: 1 replacement.",
                    ),
                    at + 0.04,
                ),
            ]
        at += 2.0
    out.append((events.TurnEnd(status="done", turns=3), at))
    return out


def _records(count: int) -> list[tuple[Any, float]]:
    """``count`` events (seri.pure.trajectories.events records) with their times."""
    out: list[tuple[Any, float]] = []
    at = 1_790_000_000.0
    task = 0
    while len(out) < count:
        out += _task_records(task, at)
        task += 1
        at += 10.0
    return out[:count]


def _stat(values: list[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.99)], statistics.mean(ordered)


def per_event(events: int) -> dict[str, Any]:
    from seri.io.session.store import open_store
    from seri.io.trajectories.recorder import Recorder
    from seri.pure.trajectories.otlp_settings import otlp_settings
    from seri.pure.trajectories.redaction import Redactor
    from seri.runtime.trajectories.otlp_live import LiveExport

    records = _records(events)
    header = synthetic_header("s" * 32, "r" * 32, "anthropic/claude-sonnet-4.5")
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    results: dict[str, Any] = {"events": len(records)}
    for protocol in ("http/protobuf", "http/json"):
        env = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": protocol,
        }
        settings = otlp_settings(env, None, "0.1.0")
        assert settings is not None
        export = LiveExport(settings, Redactor(), lambda line: log(f"warning: {line}"))
        took: list[float] = []
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        export.start("s" * 32, "r" * 32, header.export(), records[0][1] - 1)
        for event, at in records:
            started = time.perf_counter()
            export.record(event.type, event.export(), at)
            took.append(time.perf_counter() - started)
        export.close(timeout=30)
        cpu = time.process_time() - cpu_start
        wall = time.perf_counter() - wall_start
        median, p99, mean = _stat(took)
        results[protocol] = {
            "median_us": median * 1e6,
            "p99_us": p99 * 1e6,
            "mean_us": mean * 1e6,
            "cpu_us_per_event": cpu / len(records) * 1e6,
            "wall_s": wall,
            "dropped": export.dropped,
        }
    server.shutdown()
    with tempfile.TemporaryDirectory() as home:
        from seri.io.session.session_table import create_session

        store = open_store(Path(home))
        create_session(
            store,
            session_id="s" * 32,
            project="/p",
            now=0.0,
            model="m",
            system_prompt="",
            prompt_hashes={},
        )
        recorder = Recorder(store, "s" * 32, Redactor(), enabled=True)
        recorder.start(header, records[0][1] - 1)
        took = []
        for event, at in records:
            started = time.perf_counter()
            recorder.record(event, at)
            took.append(time.perf_counter() - started)
        median, p99, mean = _stat(took)
        results["recorder"] = {
            "median_us": median * 1e6,
            "p99_us": p99 * 1e6,
            "mean_us": mean * 1e6,
        }
        store.connection.close()
    return results


def per_event_in_a_run(events: int) -> dict[str, Any]:
    """Each event through a chat's own path (``RunEvents.record``: the recorder, then each
    observer with the event redacted), without and with the live export as an observer."""
    from seri.io.session.session_table import create_session
    from seri.io.session.store import open_store
    from seri.io.trajectories.recorder import Recorder
    from seri.pure.trajectories.otlp_settings import otlp_settings
    from seri.pure.trajectories.redaction import Redactor
    from seri.runtime.trajectories.otlp_live import LiveExport, OtlpObserver
    from seri.runtime.trajectories.run_events import RunEvents

    records = _records(events)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}"}
    settings = otlp_settings(env, None, "0.1.0")
    assert settings is not None
    redactor = Redactor.of(("sk-or-v1-" + "0" * 40,))
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as home:
        store = open_store(Path(home))
        for label, exported in (("export off", False), ("export on", True), ("export off", False)):
            session = uuid.uuid4().hex
            create_session(
                store,
                session_id=session,
                project="/p",
                now=0.0,
                model="m",
                system_prompt="",
                prompt_hashes={},
            )
            observer = OtlpObserver(LiveExport(settings, redactor, log)) if exported else None
            # The header's time, each event's, the end's.
            times = iter([records[0][1] - 1] + [at for _, at in records] + [records[-1][1]])
            run = RunEvents(
                Recorder(store, session, redactor, enabled=True),
                (observer,) if observer else (),
                clock=times.__next__,
            )
            run.start(synthetic_header(session, run.run_id, "anthropic/claude-sonnet-4.5"))
            took: list[float] = []
            cpu_start = time.process_time()
            for event, _ in records:
                started = time.perf_counter()
                run.record(event)
                took.append(time.perf_counter() - started)
                if len(took) % 1000 == 0:
                    run.flush()  # as the chat does with each conversation write
            run.finish()
            if observer:
                observer.close(timeout=30)
            cpu = time.process_time() - cpu_start
            median, p99, mean = _stat(took)
            row = {"median_us": median * 1e6, "p99_us": p99 * 1e6, "mean_us": mean * 1e6}
            row["cpu_us_per_event"] = cpu / len(records) * 1e6
            # Twice without export (before and after): the better is the baseline.
            if label not in results or row["mean_us"] < results[label]["mean_us"]:
                results[label] = row
        store.connection.close()
    server.shutdown()
    return results


def _import_time(python: str, statement: str, env: dict[str, str] | None = None) -> float:
    probe = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    times = []
    for _ in range(IMPORT_RUNS):
        done = subprocess.run(
            [python, "-c", probe], capture_output=True, text=True, env=env, check=True
        )
        times.append(float(done.stdout))
    return statistics.median(times) * 1000


def imports() -> dict[str, float]:
    found = {
        "seri's exporter (otlp_live, otlp_sender, httpx)": _import_time(
            PYTHON, "import seri.runtime.trajectories.otlp_live, httpx"
        ),
        "seri's exporter, httpx already loaded (as in seri chat)": _import_time(
            PYTHON,
            "import httpx; t = time.perf_counter(); import seri.runtime.trajectories.otlp_live",
        ),
    }
    sdk_python = SDK_VENV / "bin" / "python"
    if not sdk_python.exists():
        log("installing the OpenTelemetry SDK into .cache/bench/otel-sdk to time its import")
        subprocess.run([sys.executable, "-m", "venv", str(SDK_VENV)], check=True)
        subprocess.run([str(SDK_VENV / "bin" / "pip"), "install", "-q", *SDK_PACKAGES], check=True)
    found["OpenTelemetry SDK + OTLP/HTTP exporter (traces and metrics)"] = _import_time(
        str(sdk_python),
        "import opentelemetry.sdk.trace, opentelemetry.sdk.trace.export, "
        "opentelemetry.sdk.metrics, opentelemetry.sdk.metrics.export, "
        "opentelemetry.exporter.otlp.proto.http.trace_exporter, "
        "opentelemetry.exporter.otlp.proto.http.metric_exporter",
    )
    return found


def _base_tree(tmp: Path) -> Path:
    base = subprocess.run(
        ["git", "merge-base", "HEAD", "main"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    tree = tmp / "base"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "archive", base, "seri"], cwd=REPO, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def startup() -> dict[str, dict[str, float]]:
    """Median wall and CPU time of each command in this tree and in the merge base, the runs
    interleaved so that a busy spell on the machine hits both alike."""
    commands = {
        "seri --version": ["--version"],
        "seri sessions": ["sessions"],
        "seri chat --help": ["chat", "--help"],
    }
    entry = "import sys; from seri.commands.main import main; sys.exit(main())"
    with tempfile.TemporaryDirectory() as tmp_text:
        tmp = Path(tmp_text)
        trees = {"branch": REPO, "base": _base_tree(tmp)}
        home = tmp / "home"
        wall: dict[tuple[str, str], list[float]] = {}
        cpu: dict[tuple[str, str], list[float]] = {}
        for round_ in range(STARTUP_RUNS + 1):
            for name, argv in commands.items():
                for tree_name, tree in trees.items():
                    env = {**os.environ, "PYTHONPATH": str(tree), "SERI_HOME": str(home)}
                    cpu_before, started = _child_cpu(), time.perf_counter()
                    subprocess.run(
                        [PYTHON, "-c", entry, *argv], env=env, capture_output=True, check=True
                    )
                    if round_:  # the first round writes bytecode caches
                        key = (name, tree_name)
                        wall.setdefault(key, []).append(time.perf_counter() - started)
                        cpu.setdefault(key, []).append(_child_cpu() - cpu_before)
    return {
        name: {
            f"{what} {tree}": statistics.median(table[(name, tree)]) * 1000
            for what, table in (("wall", wall), ("cpu", cpu))
            for tree in ("base", "branch")
        }
        for name in commands
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=20_000)
    args = parser.parse_args()
    log("per event")
    cost = per_event(args.events)
    log("per event, through a chat's RunEvents")
    in_run = per_event_in_a_run(args.events)
    log("imports")
    loaded = imports()
    log("start-up, A/B against the merge base")
    starts = startup()
    lines = [
        "# OTLP export: what it costs",
        "",
        f"{cost['events']:,} recorded events (tasks of 3 model calls and 2 edits), fed to the live "
        "export with a loopback collector answering 200.",
        "",
        "| per event | caller's thread: median | p99 | mean | process CPU (incl. sender) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for protocol in ("http/protobuf", "http/json"):
        row = cost[protocol]
        lines.append(
            f"| live export, {protocol} | {row['median_us']:.1f} µs | {row['p99_us']:.1f} µs | "
            f"{row['mean_us']:.1f} µs | {row['cpu_us_per_event']:.1f} µs |"
        )
    row = cost["recorder"]
    lines.append(
        f"| for scale: Recorder.record (redact, elide, JSON) | {row['median_us']:.1f} µs | "
        f"{row['p99_us']:.1f} µs | {row['mean_us']:.1f} µs | |"
    )
    lines += [
        "",
        "The same events through a chat's own path (`RunEvents.record`: recorded, and handed "
        "redacted to each observer), recording on:",
        "",
        "| per event | median | p99 | mean | process CPU (incl. sender) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, row in in_run.items():
        lines.append(
            f"| {name} | {row['median_us']:.1f} µs | {row['p99_us']:.1f} µs | "
            f"{row['mean_us']:.1f} µs | {row['cpu_us_per_event']:.1f} µs |"
        )
    off, on = in_run["export off"], in_run["export on"]
    lines.append(
        f"| **export's share** | {on['median_us'] - off['median_us']:+.1f} µs | | "
        f"{on['mean_us'] - off['mean_us']:+.1f} µs | "
        f"{on['cpu_us_per_event'] - off['cpu_us_per_event']:+.1f} µs |"
    )
    lines += ["", "| import | median |", "| --- | --- |"]
    lines += [f"| {name} | {ms:.1f} ms |" for name, ms in loaded.items()]
    lines += [
        "",
        "| start-up, export off (median) | merge base: wall | this tree: wall "
        "| merge base: CPU | this tree: CPU |",
        "| --- | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {name} | {t['wall base']:.1f} ms | {t['wall branch']:.1f} ms | "
        f"{t['cpu base']:.1f} ms | {t['cpu branch']:.1f} ms |"
        for name, t in starts.items()
    ]
    text = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "otlp.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
