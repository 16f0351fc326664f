"""Row 3, per model call: seri's own work around one call, at growing history sizes.

Measured in-process on a real store, with the real code paths. Every step is timed in CPU
time (``time.process_time``), which other load on the machine does not inflate, except
storing, which waits for two fsyncs: it is shown in wall time with its CPU time beside it.

* estimate: ``TaskLoop.estimate`` (running totals: O(1));
* decision: ``should_compact`` on that estimate;
* loop copy: ``tuple(loop.history)``, which ``run_task`` does for every ``CallModel``;
* build: ``ModelCaller.encoded_body``, what seri sends: each message's wire JSON is encoded
  once and cached, so a call encodes its new messages and joins the rest into the body;
* uncached (reference, not in the total): ``build_request`` plus ``json.dumps(...).encode()``
  over the whole history, what a call would cost without the cache;
* store: ``Driver.handle(Persist(...))`` for the assistant message, then for its tool
  result: redaction, INSERT, counters, one ``BEGIN IMMEDIATE``/``COMMIT`` (fsync) each.

The floor for storing is the same two rows written with bare apsw, one committed
transaction each, on the same database.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.common import (
    LOAD_RUNS,
    RESULTS,
    STARTUP_RUNS,
    Stat,
    fmt_bytes,
    fmt_seconds,
    log,
    stat,
)
from scripts.bench.fixtures import Fixtures
from scripts.bench.plot import Series, line_chart
from scripts.bench.table import Row, met

SIZES = (10, 1_000, 10_000, 100_000)
INNER = 20_000  # repetitions of the sub-microsecond steps inside one timing
KEY = "sk-or-v1-" + "ab12" * 16
FLAT_RATIO = 1.5


@dataclass
class Sizes:
    """component -> size -> Stat (seconds per call)."""

    stats: dict[str, dict[int, Stat]]
    body_bytes: dict[int, int]


def _per_op(action: Callable[[], object], inner: int, rounds: int) -> Stat:
    samples = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(inner):
            action()
        samples.append((time.process_time() - start) / inner)
    return stat(samples)


def _measure(fixtures: Fixtures, size: int, sizes: Sizes) -> None:
    from seri.io.session import conversations, session_table
    from seri.io.session.session_log import SessionLog
    from seri.io.session.store import open_store
    from seri.io.trajectories.recorder import Recorder
    from seri.pure.agent.effects import CallModel, Persist
    from seri.pure.agent.task_loop import TaskLoop
    from seri.pure.agent.task_records import TaskSetup, conversation_of
    from seri.pure.compaction.tokens import should_compact
    from seri.pure.inputs.settings import DEFAULT_CONTEXT_WINDOW, Settings
    from seri.pure.permissions.permission_policy import Policy
    from seri.pure.session.records import Message, ToolCall
    from seri.pure.trajectories.redaction import Redactor
    from seri.runtime.agent.agent import PARENT_TOOLS
    from seri.runtime.agent.interpreter import Interpreter
    from seri.runtime.agent.ports import Nobody, NoTools
    from seri.runtime.provider.model_caller import ModelCaller
    from seri.runtime.trajectories.run_events import RunEvents

    made = fixtures.history(size)
    store = open_store(made.home)
    state = session_table.load_state(store, made.session_id)
    history = conversations.load_messages(store, made.session_id)
    setup = TaskSetup(
        system_prompt=state.system_prompt,
        max_turns=500,
        context_window=DEFAULT_CONTEXT_WINDOW,
        keep_tokens=20_000,
        elide_bytes=4096,
        policy=Policy(),
        interactive=False,
        tools=PARENT_TOOLS,
    )
    loop = TaskLoop(
        setup, conversation_of(history, None, state.last_input_tokens, state.total_chars)
    )
    window = DEFAULT_CONTEXT_WINDOW
    out = sizes.stats
    out.setdefault("estimate", {})[size] = _per_op(loop.estimate, INNER, LOAD_RUNS)
    estimate = loop.estimate()
    out.setdefault("decision", {})[size] = _per_op(
        lambda: should_compact(estimate, window), INNER, LOAD_RUNS
    )
    copies = max(1, min(INNER, 2_000_000 // max(size, 1)))
    out.setdefault("loop copy", {})[size] = _per_op(lambda: tuple(loop.history), copies, LOAD_RUNS)
    recorder = RunEvents(Recorder(store, made.session_id, Redactor.of([KEY]), enabled=False))
    caller = ModelCaller(Settings(), KEY, recorder, PARENT_TOOLS)
    effect = CallModel(tuple(loop.history), "turn", state.system_prompt)
    builds = max(1, min(200, 200_000 // max(size, 1)))
    sizes.body_bytes[size] = len(caller.encoded_body(effect))  # also warms the wire cache
    out.setdefault("build", {})[size] = _per_op(
        lambda: caller.encoded_body(effect), builds, LOAD_RUNS
    )

    def serialize() -> bytes:
        body = caller.body(effect)
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()

    out.setdefault("serialize", {})[size] = _per_op(serialize, builds, LOAD_RUNS)

    interpreter = Interpreter(
        model=caller,
        tools=NoTools(),  # Persist never reaches the tools
        session=SessionLog(store, made.session_id, state.revision, pending=recorder.flush_into),
        recorder=recorder,
        person=Nobody(),
        redactor=Redactor.of([KEY]),
    )
    call = ToolCall("call_bench", "read_file", json.dumps({"path": "src/app.py"}))
    reply = Message(role="assistant", text="Reading the handler first.", tool_calls=(call,))
    result = Message(
        role="tool",
        text="def handler():\n    return 1\n" * 20,
        tool_call_id=call.id,
        tool_name=call.name,
    )
    samples, cpu, floor = [], [], []
    conn = store.connection
    seq = 10_000_000
    for _ in range(STARTUP_RUNS):
        cpu_start = time.process_time()
        start = time.perf_counter()
        interpreter.handle(Persist((reply,)))
        interpreter.handle(Persist((result,)))
        samples.append(time.perf_counter() - start)
        cpu.append(time.process_time() - cpu_start)
        start = time.perf_counter()
        for text in (reply.text, result.text):
            seq += 1
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(
                "INSERT INTO messages(session_id, seq, role, kind, body, chars, created)"
                " VALUES (?,?,?,?,?,?,?)",
                (made.session_id, seq, "user", "", text, len(text), 0.0),
            )
            conn.execute("COMMIT")
        floor.append(time.perf_counter() - start)
    out.setdefault("store", {})[size] = stat(samples)
    out.setdefault("store cpu", {})[size] = stat(cpu)
    out.setdefault("store floor", {})[size] = stat(floor)
    # Leave the shared session as it was for the rows that follow.
    with store.write() as conn:
        conn.execute(
            "DELETE FROM messages WHERE session_id = ? AND seq >= 10000000", (made.session_id,)
        )
    store.close()


FLAT = ("estimate", "decision", "store")
LABELS = {
    "estimate": "estimate (`TaskLoop.estimate`, running totals)",
    "decision": "compaction decision (`should_compact`)",
    "loop copy": "loop: `tuple(history)` for each `CallModel`",
    "build": "request body as sent (`ModelCaller.encoded_body`, wire cache warm)",
    "serialize": "reference: the same body uncached (`build_request` + `json.dumps`)",
    "store": "storing (`Driver` Persist ×2: assistant + tool result)",
}


def _short(size: int) -> str:
    return f"{size // 1000}k" if size >= 1000 else str(size)


def _by_size(stats: dict[int, Stat]) -> str:
    return "; ".join(f"{_short(s)}: {st.seconds()}" for s, st in sorted(stats.items()))


def run(fixtures: Fixtures) -> list[Row]:
    sizes = Sizes({}, {})
    for size in SIZES:
        log(f"per call: history of {size:,} messages")
        _measure(fixtures, size, sizes)
    stats = sizes.stats
    rows = []
    for name in ("estimate", "decision", "loop copy", "build", "serialize", "store"):
        by = stats[name]
        growth = by[SIZES[-1]].median / by[SIZES[0]].median
        if name in ("build", "serialize"):
            target = "grows with the body (it holds the history): O(n) by nature"
            ok = None
            peer = "body " + ", ".join(
                f"{_short(s)}: {fmt_bytes(b)}" for s, b in sorted(sizes.body_bytes.items())
            )
        elif name == "store":
            # Wall time here is two fsyncs, which the disk decides; the flatness of seri's
            # own work is judged on CPU time.
            cpu = stats["store cpu"]
            growth = cpu[SIZES[-1]].median / cpu[SIZES[0]].median
            target = f"flat: cpu at 100k ≤ {FLAT_RATIO}× at 10"
            ok = growth <= FLAT_RATIO
            by = stats["store"]
            peer = (
                "floor, bare apsw INSERT+COMMIT ×2: "
                + _by_size(stats["store floor"])
                + "; seri's cpu: "
                + "; ".join(f"{_short(s)}: {fmt_seconds(st.median)}" for s, st in cpu.items())
            )
        else:
            target = f"flat (100k ≤ {FLAT_RATIO}× 10)"
            ok = growth <= FLAT_RATIO
            peer = "—"
        rows.append(
            Row(
                "3",
                f"{LABELS[name]} (×{growth:.1f} from 10 to 100k)",
                _by_size(by),
                peer,
                target,
                met(ok),
            )
        )
    # The uncached body is a reference for what the cache saves, not work seri does.
    totals = {s: sum(stats[n][s].median for n in LABELS if n != "serialize") for s in SIZES}
    flat_part = {s: sum(stats[n][s].median for n in FLAT) for s in SIZES}
    flat_cpu = {
        s: stats["estimate"][s].median + stats["decision"][s].median + stats["store cpu"][s].median
        for s in SIZES
    }
    growth = flat_cpu[SIZES[-1]] / flat_cpu[SIZES[0]]
    rows.append(
        Row(
            "3",
            "per-call total (sum of medians) / the flat part (estimate + decision + store)",
            "; ".join(
                f"{_short(s)}: {fmt_seconds(totals[s])} / {fmt_seconds(flat_part[s])}"
                for s in SIZES
            ),
            "flat part in cpu: "
            + "; ".join(f"{_short(s)}: {fmt_seconds(flat_cpu[s])}" for s in SIZES),
            f"flat part flat (cpu at 100k ≤ {FLAT_RATIO}× at 10)",
            met(growth <= FLAT_RATIO),
        )
    )
    _plot(totals, flat_part, stats)
    return rows


def _plot(
    totals: dict[int, float], flat: dict[int, float], stats: dict[str, dict[int, Stat]]
) -> None:
    RESULTS.mkdir(exist_ok=True)
    ms = 1e3
    series = [
        Series("total", (200, 40, 40), tuple((s, totals[s] * ms) for s in SIZES)),
        Series(
            "request body as sent (cached)",
            (230, 140, 20),
            tuple((s, stats["build"][s].median * ms) for s in SIZES),
        ),
        Series(
            "the same body uncached (reference)",
            (120, 120, 120),
            tuple((s, stats["serialize"][s].median * ms) for s in SIZES),
        ),
        Series(
            "flat part: estimate + decision + store",
            (40, 90, 200),
            tuple((s, flat[s] * ms) for s in SIZES),
        ),
    ]
    renderer = line_chart(
        Path(RESULTS / "per_call.png"),
        series,
        title="seri per-call cost vs history size",
        x_label="messages in the history (log)",
        y_label="ms per call: cpu, storing wall (log)",
    )
    log(f"per call: plot drawn with {renderer}")
