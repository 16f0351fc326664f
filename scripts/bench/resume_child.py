"""One resume, measured in a fresh process: ``resume_child.py MODE PATH [SESSION] [--trace]``.

MODE is ``seri`` (open_store + load_state + load_messages) or ``jsonl`` (json.loads per
line). Prints one JSON object: wall and CPU seconds, the growth of peak RSS (ru_maxrss)
over the baseline taken after imports, and the messages loaded. With ``--trace`` the
load runs under tracemalloc and ``heap_peak`` is the peak of Python allocations (its
times are then not representative). ``seri-parts`` splits load_messages into its steps.
"""

from __future__ import annotations

import json
import resource
import sys
import time
import tracemalloc
from collections.abc import Callable


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _seri(path: str, session_id: str) -> Callable[[], int]:
    from pathlib import Path

    from seri.io.session import conversations, session_table
    from seri.io.session.store import open_store

    def load() -> int:
        store = open_store(Path(path))
        state = session_table.load_state(store, session_id)
        messages = conversations.load_messages(store, session_id)
        assert state.session.messages == len(messages), (state.session.messages, len(messages))
        _keep.append(messages)
        return len(messages)

    return load


def _jsonl(path: str) -> Callable[[], int]:
    def load() -> int:
        with open(path, encoding="utf-8") as lines:
            parsed = [json.loads(line) for line in lines]
        _keep.append(parsed)
        return len(parsed)

    return load


_keep: list[object] = []  # what was loaded stays alive until the figures are taken


def _parts(path: str, session_id: str) -> None:
    """Where load_messages spends its time: SQLite rows, json.loads, cattrs structuring."""
    from pathlib import Path

    from seri.io.session.codec import message_from_dict
    from seri.io.session.store import open_store

    store = open_store(Path(path))
    start = time.perf_counter()
    rows = store.connection.execute(
        "SELECT body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
    ).fetchall()
    fetched = time.perf_counter()
    dicts = [json.loads(body) for (body,) in rows]
    parsed = time.perf_counter()
    messages = tuple(message_from_dict(d) for d in dicts)
    built = time.perf_counter()
    assert len(messages) == len(rows)
    times = {"sqlite": fetched - start, "json": parsed - fetched, "structure": built - parsed}
    print(json.dumps(times))


def main() -> int:
    args = [a for a in sys.argv[1:] if a != "--trace"]
    trace = "--trace" in sys.argv
    mode, path = args[0], args[1]
    if mode == "seri-parts":
        _parts(path, args[2])
        return 0
    load = _seri(path, args[2]) if mode == "seri" else _jsonl(path)
    if trace:
        tracemalloc.start()
    rss_before = _peak_rss()
    cpu_start = time.process_time()
    start = time.perf_counter()
    count = load()
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    result = {
        "seconds": seconds,
        "cpu": cpu,
        "rss_bytes": _peak_rss() - rss_before,
        "messages": count,
    }
    if trace:
        result["heap_peak"] = tracemalloc.get_traced_memory()[1]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
