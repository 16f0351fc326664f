"""What a session's model calls cost so far, summed from its recorded trajectory events."""

from __future__ import annotations

from seri.io.session.store import Store
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs import json_text


def session_usage(store: Store, session_id: str) -> UsageTotals:
    """Every recorded model and summarizer call of the session, subagents' included (they
    record into their parent's runs). Read on request (/cost, /status), never per call."""
    totals = UsageTotals()
    rows = store.connection.execute(
        "SELECT body FROM events WHERE session_id = ? AND type IN ('model_call', 'summary_call')",
        (session_id,),
    )
    for (body,) in rows:
        try:
            usage = json_text.loads_stored(body).get("usage")
        except (ValueError, AttributeError):
            continue
        if isinstance(usage, dict):
            totals = totals.plus(UsageTotals.of_record(usage))
    return totals
