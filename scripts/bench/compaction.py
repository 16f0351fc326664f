"""Row 6, compaction at 100,000 messages: the cut search, the recap's preparation, the decision.

* cut search, in memory: ``cut_messages`` (walks newest-first, stops once the keep
  budget is spent);
* cut search, from the store: ``find_cut`` fed lazily by
  ``SELECT role, chars … ORDER BY seq DESC`` (what a store-side compaction can do
  without loading the history);
* recap preparation on the evicted prefix: ``summarizer_messages`` (which itself runs
  ``paths_touched`` and ``elide_payloads`` and renders the transcript), and the two
  helpers on their own; ``compact()`` calls ``paths_touched`` once more after the reply;
* the per-call decision (``TaskLoop.estimate`` + ``should_compact``) at 100 and 100,000.

All in CPU time (``time.process_time``), which other load on the machine does not inflate.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from scripts.bench.common import LOAD_RUNS, Stat, fmt_bytes, log, stat
from scripts.bench.fixtures import Fixtures
from scripts.bench.table import Row, met

BIG, SMALL = 100_000, 100
KEEP_TOKENS = 20_000
ELIDE_BYTES = 4096
INNER = 20_000


def _time(action: Callable[[], object], runs: int = LOAD_RUNS, inner: int = 1) -> Stat:
    samples = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(inner):
            action()
        samples.append((time.process_time() - start) / inner)
    return stat(samples)


def _decision(fixtures: Fixtures, size: int) -> Stat:
    from seri.io.session import conversations, session_table
    from seri.io.session.store import open_store
    from seri.pure.agent.task_loop import TaskLoop
    from seri.pure.agent.task_records import TaskSetup, conversation_of
    from seri.pure.compaction.tokens import should_compact
    from seri.pure.inputs.settings import DEFAULT_CONTEXT_WINDOW
    from seri.pure.permissions.permission_policy import Policy
    from seri.pure.tools.tool_specs import select_specs

    made = fixtures.history(size)
    store = open_store(made.home)
    state = session_table.load_state(store, made.session_id)
    history = conversations.load_messages(store, made.session_id)
    store.close()
    setup = TaskSetup(
        system_prompt=state.system_prompt,
        max_turns=500,
        context_window=DEFAULT_CONTEXT_WINDOW,
        keep_tokens=KEEP_TOKENS,
        elide_bytes=ELIDE_BYTES,
        policy=Policy(),
        interactive=False,
        tools=select_specs(("read_file",)),
    )
    loop = TaskLoop(
        setup, conversation_of(history, None, state.last_input_tokens, state.total_chars)
    )
    return _time(lambda: should_compact(loop.estimate(), DEFAULT_CONTEXT_WINDOW), inner=INNER)


def run(fixtures: Fixtures) -> list[Row]:
    from seri.io.session import conversations
    from seri.io.session.store import open_store
    from seri.pure.compaction.cuts import cut_messages, find_cut
    from seri.pure.compaction.recap_paths import paths_touched
    from seri.pure.compaction.summarizer_request import elide_payloads, summarizer_messages
    from seri.pure.compaction.tokens import estimate_tokens

    log(f"compaction: {BIG:,} messages")
    made = fixtures.history(BIG)
    store = open_store(made.home)
    history = conversations.load_messages(store, made.session_id)
    count = len(history)
    cut = cut_messages(history, KEEP_TOKENS)
    assert cut is not None
    in_memory = _time(lambda: cut_messages(history, KEEP_TOKENS))
    conn = store.connection

    def from_store() -> object:
        rows = conn.execute(
            "SELECT role, chars FROM messages WHERE session_id = ? ORDER BY seq DESC",
            (made.session_id,),
        )
        found = find_cut(
            count, ((role, estimate_tokens(chars)) for role, chars in rows), KEEP_TOKENS
        )
        rows.close()
        return found

    assert from_store() == cut
    lazy = _time(from_store)
    store.close()
    evicted = history[: cut.index_of_first_kept]
    summarizer = _time(lambda: summarizer_messages(None, evicted, "", ELIDE_BYTES))
    request = summarizer_messages(None, evicted, "", ELIDE_BYTES)
    request_chars = sum(len(m.text) for m in request)
    paths = _time(lambda: paths_touched(evicted))
    elide = _time(lambda: elide_payloads(evicted, ELIDE_BYTES))
    prep = summarizer.median + paths.median
    small, big = _decision(fixtures, SMALL), _decision(fixtures, BIG)
    growth = big.median / small.median
    return [
        Row(
            "6",
            f"cut search at {BIG:,} messages (keeps {count - cut.index_of_first_kept} newest, "
            f"{cut.kept_tokens:,} tokens; n={LOAD_RUNS})",
            f"`cut_messages` in memory: {in_memory.seconds()}",
            f"`find_cut` over a lazy newest-first SQL cursor: {lazy.seconds()}",
            "bench's own: < 10 ms (work ∝ kept tail, not history)",
            met(in_memory.median < 0.010 and lazy.median < 0.010),
        ),
        Row(
            "6",
            f"recap preparation on the {len(evicted):,} evicted messages (n={LOAD_RUNS})",
            f"`summarizer_messages`: {summarizer.seconds()} (request {fmt_bytes(request_chars)}); "
            f"`paths_touched`: {paths.seconds()}; `elide_payloads`: {elide.seconds()}",
            "as `compact()` runs it (summarizer_messages + paths_touched again): "
            f"{prep * 1e3:.0f} ms",
            "bench's own: < 1 s; O(evicted) by nature",
            met(prep < 1.0),
        ),
        Row(
            "6",
            "per-call compaction decision (`estimate` + `should_compact`), "
            f"{SMALL} vs {BIG:,} messages",
            f"{SMALL}: {small.seconds()}; {BIG // 1000}k: {big.seconds()} (×{growth:.2f})",
            "—",
            "flat (100k ≤ 1.5× 100)",
            met(growth <= 1.5),
        ),
    ]
