"""One resume, measured in a fresh process: ``resume_child.py (seri|jsonl) PATH [SESSION]``.

Prints one JSON object: seconds, the growth of peak RSS (ru_maxrss) over the
baseline taken after imports, and the number of messages loaded.
"""

from __future__ import annotations

import json
import resource
import sys
import time


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def main() -> int:
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "seri":
        from pathlib import Path

        from seri.io import conversations
        from seri.io.store import open_store

        session_id = sys.argv[3]
        before = _peak_kb()
        start = time.perf_counter()
        store = open_store(Path(path))
        state = conversations.load_state(store, session_id)
        messages = conversations.load_messages(store, session_id)
        seconds = time.perf_counter() - start
        count = len(messages)
        assert state.session.messages == count, (state.session.messages, count)
    elif mode == "seri-parts":
        return _parts(path, sys.argv[3])
    else:
        before = _peak_kb()
        start = time.perf_counter()
        with open(path, encoding="utf-8") as lines:
            parsed = [json.loads(line) for line in lines]
        seconds = time.perf_counter() - start
        count = len(parsed)
    grown = (_peak_kb() - before) * 1024
    print(json.dumps({"seconds": seconds, "rss_bytes": grown, "messages": count}))
    return 0


def _parts(path: str, session_id: str) -> int:
    """Where load_messages spends its time: SQLite rows, json.loads, cattrs structuring."""
    from pathlib import Path

    from seri.io.codec import message_from_dict
    from seri.io.store import open_store

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
    print(
        json.dumps(
            {"sqlite": fetched - start, "json": parsed - fetched, "structure": built - parsed}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
