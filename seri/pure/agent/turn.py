"""One task: model turns until the model answers without asking for a tool.

``run_task`` is a generator of effects (``seri.pure.agent.effects``). It owns every
decision: the turn budget, when to compact, what happens on overflow, which
tool calls may run, that every tool call gets exactly one result, which rules
fire. The interpreter (``seri.runtime.agent.interpreter``) only carries the effects out.
``compact_on_demand`` is ``/compact``: the same compaction, without a turn.

The parts live beside it: the task's records in ``task_records``, its working state (and
compaction with the shrink ladder) in ``task_loop``, one turn request made to fit the window
in ``turn_request``, the answers to a reply's tool calls in ``tool_call_answers``, and the
largest prompt a session takes in ``prompt_limit``.
"""

from __future__ import annotations

import attrs

from seri.pure.agent.effects import CountSpending, Flow, Record, perform
from seri.pure.agent.prompt_limit import oversized_prompt
from seri.pure.agent.task_loop import TaskLoop
from seri.pure.agent.task_records import Conversation, TaskEnd, TaskSetup
from seri.pure.agent.tool_call_answers import answer_calls
from seri.pure.agent.turn_request import send_turn
from seri.pure.compaction.compaction_outcome import NotCompacted
from seri.pure.compaction.tokens import message_chars
from seri.pure.extensions import hook_points
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.session.records import Message
from seri.pure.trajectories import events


def length_detail(dropped_calls: int) -> str:
    """What a person is told when the answer hit the output limit."""
    calls = ""
    if dropped_calls == 1:
        calls = "; its unfinished tool call was dropped, not run"
    elif dropped_calls:
        calls = f"; its {dropped_calls} unfinished tool calls were dropped, not run"
    return (
        "the answer was cut off at the output limit (finish_reason length)"
        f"{calls}; raise sampling.max_tokens in config.json, or ask the model to go on"
    )


def cut_answer(message: Message) -> Message | None:
    """The part of an answer cut by the output limit that is kept: its text and reasoning,
    flagged partial. Its tool calls are dropped: their arguments may be cut mid-JSON, and a
    server that is sent such a call again can refuse every later request (llama.cpp answers
    500)."""
    if not (message.text or message.reasoning or message.reasoning_details):
        return None
    return attrs.evolve(message, tool_calls=(), kind="partial")


def run_task(
    setup: TaskSetup, conversation: Conversation, prompt: Message, turns_used: int = 0
) -> Flow[TaskEnd]:
    """Work on ``prompt`` until the model answers without tool calls, or the budget ends."""
    loop = TaskLoop(setup, conversation)
    loop.turns = turns_used
    refusal = oversized_prompt(loop.window, message_chars(prompt), loop.budget.key)
    if refusal:
        yield Record(events.TurnEnd(status="refused", turns=loop.turns, error=refusal))
        return loop.end("refused", detail=refusal)
    hooked = yield from hook_points.prompt_submitted(setup, prompt)
    if isinstance(hooked, str):
        yield Record(events.TurnEnd(status="refused", turns=loop.turns, error=hooked))
        return loop.end("refused", detail=hooked)
    yield from loop.cap_history()
    yield loop.add((prompt, *hooked))
    sent_back = 0
    while True:
        if loop.turns >= setup.max_turns:
            message = (
                f"turn budget spent: {loop.turns} of {setup.max_turns} model turns used; "
                "raise it with --max-turns N or /max-turns N"
            )
            yield Record(events.TurnEnd(status="max_turns", turns=loop.turns))
            return loop.end("max_turns", detail=message)
        stopped = yield from _within_cost_budget(loop)
        if stopped is not None:
            return stopped
        reply = yield from send_turn(loop)
        if isinstance(reply, TaskEnd):
            return reply
        loop.turns += 1
        if reply.usage is not None and reply.usage.input_tokens:
            loop.billed = reply.usage.input_tokens
            loop.window = loop.window.learned(reply.usage.input_tokens, loop.request_local)
        yield loop.counters()
        if reply.finish_reason == "length":
            # Not done: the answer stopped because the output budget ran out.
            kept = cut_answer(reply.message)
            if kept is not None:
                yield loop.add((kept,))
            detail = length_detail(len(reply.message.tool_calls))
            yield Record(events.TurnEnd(status="length", turns=loop.turns, error=detail))
            return loop.end("length", detail=detail)
        yield loop.add((reply.message,))
        if not reply.message.tool_calls:
            back = yield from hook_points.stop_sent_back(setup, sent_back, reply.message.text)
            if back is not None:
                sent_back += 1
                yield loop.add((back,))
                continue
            yield Record(events.TurnEnd(status="done", turns=loop.turns))
            return loop.end("done", reply.message.text)
        interrupted = yield from answer_calls(loop, reply)
        if interrupted:
            yield Record(events.TurnEnd(status="interrupted", turns=loop.turns))
            return loop.end("interrupted", detail="interrupted by user", by_user=True)


def _within_cost_budget(loop: TaskLoop) -> Flow[TaskEnd | None]:
    """None when the next call may start; else the task's end (budget spent, or a provider
    that reports no cost while a budget is set)."""
    limit = loop.setup.max_budget_usd
    if limit is None:
        return None
    from seri.pure.agent.cost_budget import budget_stop

    spent = yield from perform(CountSpending())
    stop = budget_stop(limit, spent)
    if stop is None:
        return None
    yield Record(events.TurnEnd(status=stop.status, turns=loop.turns, error=stop.detail))
    return loop.end(stop.status, detail=stop.detail)


@attrs.frozen
class CompactEnd:
    """What ``/compact`` (or ``seri compact``) left: the conversation, why nothing was
    compacted (None: it was), and the answer budget as the run has it now."""

    conversation: Conversation
    not_compacted: NotCompacted | None
    budget: OutputBudget


def compact_on_demand(
    setup: TaskSetup, conversation: Conversation, focus: str, trigger: str = "manual"
) -> Flow[CompactEnd]:
    """``/compact [focus]``: the same primitive, without waiting for the 50% trigger.

    It never leaves a session that does not fit under half the window: when the compaction
    (or no safe cut) leaves too much, the shrink ladder runs; when even that cannot make it fit,
    the answer says why (and the caller exits 1).
    """
    loop = TaskLoop(setup, conversation)
    yield from loop.cap_history()
    # Sized as the chat's next request will be, so that it does not compact again at once.
    loop.window = loop.priced_window()
    why_not = yield from loop.make_fit(trigger, focus)
    learned = loop.learned_window()
    if learned and learned != conversation.learned_window:
        # A summarizer request refused as too long stated the window: kept with the session
        # by the same write a task's counting uses, so the next process sizes for it at once,
        # whether or not this compaction went on to succeed.
        yield loop.counters(turns=False)
    return CompactEnd(loop.conversation(), why_not, loop.budget)
