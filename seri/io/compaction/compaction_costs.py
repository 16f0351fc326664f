"""What compactions cost, from the session's ledger (the ``compactions`` table): the
summarizer's tokens and reported cost, and the tokens written to the provider's cache again
because the cached prefix was replaced."""

from __future__ import annotations

from typing import Any

from seri.io.session.store import Store


def costs_since(store: Store, session_id: str, since: float) -> dict[str, Any] | None:
    """The sums over the session's compactions from ``since`` on (epoch seconds); None when
    none ran. ``summary_cost`` is None when no summarizer call reported one."""
    rows: list[Any] = store.connection.execute(
        "SELECT count(*), coalesce(sum(summary_calls), 0), coalesce(sum(summary_input_tokens), 0),"
        " coalesce(sum(summary_output_tokens), 0), sum(summary_cost),"
        " coalesce(sum(cache_rewrite_tokens), 0) FROM compactions"
        " WHERE session_id = ? AND at >= ?",
        (session_id, since),
    ).fetchall()
    count, calls, input_tokens, output_tokens, cost, rewrite = rows[0]
    if not count:
        return None
    return {
        "count": int(count),
        "summary_calls": int(calls),
        "summary_input_tokens": int(input_tokens),
        "summary_output_tokens": int(output_tokens),
        "summary_cost": None if cost is None else round(float(cost), 6),
        "cache_rewrite_tokens": int(rewrite),
    }
