"""A session's compaction ledger (the ``compactions`` table), one entry per compaction, as
``seri sessions export`` shows it; ``seri.io.compaction.compaction_costs`` sums the same rows."""

from __future__ import annotations

from typing import Any

from seri.io.session.store import Store


def read_ledger(store: Store, session_id: str) -> list[dict[str, Any]]:
    rows = store.connection.execute(
        "SELECT at, trigger, focus, evicted, estimate_before, estimate_after, summary_calls,"
        " elided, summary_input_tokens, summary_output_tokens, summary_cost,"
        " cache_rewrite_tokens, task_kept, goal_kept FROM compactions WHERE session_id = ?"
        " ORDER BY id",
        (session_id,),
    )
    return [
        {
            "at": at,
            "trigger": trigger,
            "focus": focus,
            "evicted": evicted,
            "estimate_before": before,
            "estimate_after": after,
            "summary_calls": calls,
            "elided": elided,
            # What it cost (migration 11; older entries say 0 and null).
            "summary_input_tokens": summary_in,
            "summary_output_tokens": summary_out,
            "summary_cost": cost,
            "cache_rewrite_tokens": rewrite,
            # Whether the task in hand and the goal came through verbatim (null: none).
            "task_kept": None if task_kept is None else bool(task_kept),
            "goal_kept": None if goal_kept is None else bool(goal_kept),
        }
        for (
            at,
            trigger,
            focus,
            evicted,
            before,
            after,
            calls,
            elided,
            summary_in,
            summary_out,
            cost,
            rewrite,
            task_kept,
            goal_kept,
        ) in rows
    ]
