"""Where a person is: the banner, /status, /cost and the compaction notice, as text."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.session.records import Message
from seri.pure.terminal.human_units import cost_text, plural, tokens_short


def banner(
    *,
    version: str,
    model: str,
    window: int | None,
    project: str,
    session: str,
    messages: int,
) -> str:
    """One line: what seri talks to, how much it can hold, where, and in which session."""
    where = f"session {session[:8]} ({plural(messages, 'message')})" if session else "new session"
    size = f"{tokens_short(window)} window" if window else "window unknown"
    return f"seri {version} · {model} · {size} · {project} · {where}"


def short_path(path: str, home: str) -> str:
    if home and (path == home or path.startswith(home.rstrip("/") + "/")):
        return "~" + path[len(home.rstrip("/")) :]
    return path


def compaction_notice(before: int, after: int, *, updated: bool) -> str:
    recap = "recap updated" if updated else "recap written"
    return f"compacted: {tokens_short(before)} → {tokens_short(after)} tokens ({recap})"


def window_use(estimate: int, window: int) -> str:
    share = 100 * estimate / window if window else 0
    return f"{tokens_short(estimate)} of {tokens_short(window)} tokens ({share:.0f}%)"


def cost_summary(totals: UsageTotals) -> str:
    if not totals.calls:
        return "no model calls yet"
    total = totals.total_cost
    cost = cost_text(total) if total is not None else "cost not reported"
    text = f"{cost} over {plural(totals.calls, 'call')}"
    if totals.unreported:
        text += f" ({totals.unreported} without usage)"
    return text


def cost_lines(run: UsageTotals, session: UsageTotals | None) -> list[str]:
    lines = [
        f"this run:     {cost_summary(run)}",
        f"  tokens:     {tokens_short(run.input_tokens)} in "
        f"({tokens_short(run.cached_tokens)} cached), {tokens_short(run.output_tokens)} out "
        f"({tokens_short(run.reasoning_tokens)} reasoning)",
    ]
    if session is None:
        lines.append("this session: unknown (trajectory recording is off)")
    else:
        lines.append(f"this session: {cost_summary(session)}, subagents and earlier runs included")
    return lines


def compaction_cost_line(spent: Mapping[str, Any]) -> str:
    """What the session's compactions cost (``seri.io.compaction.compaction_costs``), for /cost."""
    cost = spent["summary_cost"]
    money = "" if cost is None else f", {cost_text(cost)}"
    return (
        f"compactions:  {spent['count']}: the summarizer read "
        f"{tokens_short(spent['summary_input_tokens'])} and wrote "
        f"{tokens_short(spent['summary_output_tokens'])}{money}; "
        f"{tokens_short(spent['cache_rewrite_tokens'])} tokens written to the cache again"
    )


def status_lines(
    *,
    model: str,
    window: int,
    estimate: int,
    max_turns: int,
    last_task_turns: int,
    session: str,
    project: str,
    cost: str,
    rules: int,
) -> list[str]:
    turns = f"{max_turns} model turns per task"
    if last_task_turns:
        left = max(0, max_turns - last_task_turns)
        turns += f" (the last task used {last_task_turns}, {left} left)"
    return [
        f"model:        {model}",
        f"window:       {window_use(estimate, window)}; compaction at 50%",
        f"turn budget:  {turns}",
        f"cost so far:  {cost}",
        f"session:      {session or 'none yet (starts with the first task)'}",
        f"project:      {project}",
        f"permissions:  {plural(rules, 'rule')} in force (/permissions lists them)",
    ]


def last_exchange(history: Sequence[Message]) -> tuple[Message, ...]:
    """The last thing the person asked and everything after it: what ``--continue`` replays.

    Recaps, fired rules and synthetic repairs are not something anyone typed; the exchange
    starts at the last user message that is.
    """
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "user" and not message.kind:
            return tuple(history[index:])
    return ()


def fit_toolbar(status: str, hints: tuple[str, ...], width: int) -> str:
    """The prompt's bottom bar within ``width``: the status, then as many of the key hints
    as fit (the first dropped first: the last, how to leave, stays longest); a status too
    long for the bar alone is cut with an ellipsis."""
    room = width - 2
    if len(status) > room:
        return f" {status[: max(1, room - 1)]}… "
    for start in range(len(hints) + 1):
        kept = hints[start:]
        text = f" {status} │ {' · '.join(kept)} " if kept else f" {status} "
        if len(text) <= width:
            return text
    return f" {status} "
