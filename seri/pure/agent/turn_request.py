"""One turn request of a task: made to fit the window before it is sent, and answered on a
provider's "too long" with one compaction and one retry.

Before the call: the 50% trigger's automatic compaction, the no-loop rule
(``seri.pure.compaction.compaction_contract``), and the shrink ladder for a request that would not
fit. After it: a bodiless 400 on a big request taken for an overflow, the window learned from the
refusal, and the compaction that keeps at most a quarter of what was refused.
"""

from __future__ import annotations

import attrs

from seri.pure.agent.effects import CallModel, Flow, ModelFailed, ModelReply, Record, Say
from seri.pure.agent.task_loop import TaskLoop
from seri.pure.agent.task_records import EndStatus, TaskEnd
from seri.pure.compaction.compaction_contract import auto_off_detail, exhausted_detail, loop_verdict
from seri.pure.compaction.compaction_outcome import Why
from seri.pure.compaction.tokens import should_compact
from seri.pure.compaction.window import Window
from seri.pure.provider.output_budget import call_within_budget
from seri.pure.trajectories import event_record, events


def send_turn(loop: TaskLoop) -> Flow[ModelReply | TaskEnd]:
    """One model call with at most one automatic and one overflow compaction."""
    yield from loop.cap_history()
    loop.window = loop.priced_window()
    estimate = loop.estimate()
    # A compaction is followed by another only once the history grew by the keep budget:
    # otherwise a recap and tail near half the window would compact every call. (Across the
    # tasks of a run too: a goal run's next task must not compact at once.)
    grown_enough = loop.last is None or loop.last.grown >= loop.window.keep_local
    failed = False
    auto = loop.setup.auto_compact
    if auto and should_compact(estimate, loop.window.tokens) and grown_enough:
        looping = loop_verdict(
            loop.last, _history_room(loop.window), _min_growth(loop.window), required=False
        )
        if looping:
            return (yield from _exhausted(loop, looping))
        # The ladder only when the request could not be sent at all.
        why_not = yield from loop.make_fit("auto", room=loop.window.request_room_local)
        if why_not is not None and why_not.reason is not Why.NO_CUT:
            # Fail-soft: the turn goes on with the uncompacted history. (No safe cut yet is
            # not a failure: it would only repeat before every call until one exists.)
            failed = True
            what = (
                "did not make the session fit" if why_not.reason is Why.DOES_NOT_FIT else "skipped"
            )
            yield Say(f"warning: automatic compaction {what}: {why_not.detail}")
    stopped = yield from _fit_before_sending(loop, failed=failed)
    if stopped is not None:
        return stopped
    reply = yield from _send(loop)
    reply = _bodiless_overflow(reply, loop)
    if isinstance(reply, ModelFailed) and reply.overflow:
        refused = loop.estimate()
        loop.window = loop.window.refused(
            reply.overflow_numbers, loop.request_local, sized_for=loop.window.scale
        )
        yield Record(
            events.Overflow(
                error=reply.error,
                estimate=refused,
                purpose="turn",
                token_scale=round(loop.window.scale, 3),
                context_window=loop.window.tokens,
            )
        )
        if not auto:
            detail = auto_off_detail("")
            yield Record(events.TurnEnd(status="overflow", turns=loop.turns, error=detail))
            return loop.end("overflow", detail=detail)
        keep = overflow_keep_tokens(loop.window.keep_local, loop.request_local)
        why_not = yield from loop.make_fit("overflow", keep=keep)
        if why_not is not None:
            detail = why_not.detail
            if why_not.reason is Why.NO_CUT:
                detail = "no safe cut exists and no tool payload is left to shrink"
            yield Record(events.TurnEnd(status="overflow", turns=loop.turns))
            return loop.end(
                "overflow", detail=f"the request is too long and compaction failed: {detail}"
            )
        reply = yield from _send(loop)
        if isinstance(reply, ModelFailed) and reply.overflow:
            yield Record(events.TurnEnd(status="overflow", turns=loop.turns))
            return loop.end(
                "overflow", detail=f"the request is still too long after compacting: {reply.error}"
            )
    if isinstance(reply, ModelFailed):
        status: EndStatus = "interrupted" if reply.interrupted else "error"
        if reply.usage is not None or reply.partial is not None:
            yield Record(
                events.ModelCall(finish_reason="incomplete", usage=reply.usage, tool_calls=0)
            )
        if reply.partial is not None:
            yield loop.add((reply.partial,))
        yield Record(events.TurnEnd(status=status, turns=loop.turns, error=reply.error))
        return loop.end(status, detail=reply.error, by_user=reply.by_user)
    assert isinstance(reply, ModelReply)
    yield Record(
        events.ModelCall(
            finish_reason=reply.finish_reason,
            usage=reply.usage,
            tool_calls=len(reply.message.tool_calls),
            model=reply.model or None,
            generation_id=reply.generation_id or None,
            refusal=reply.refusal or event_record.ABSENT,
        )
    )
    return reply


def _history_room(window: Window) -> int:
    """What the window holds besides the system prompt and the tools (local tokens)."""
    return max(1, window.local(window.tokens) - window.overhead_local)


def _min_growth(window: Window) -> int:
    """The growth after which compacting again is no loop (local tokens): the keep budget, or
    half of what a request holds beyond what a compaction leaves, where that is less."""
    headroom = window.request_room_local - window.history_target_local
    return max(1, min(window.keep_local, headroom // 2))


def _exhausted(loop: TaskLoop, why: str) -> Flow[TaskEnd]:
    """The no-loop rule stopped the run: the context is exhausted, hand the session off."""
    detail = exhausted_detail(why, "")
    yield Record(events.TurnEnd(status="context_exhausted", turns=loop.turns, error=detail))
    return loop.end("context_exhausted", detail=detail)


def _fit_before_sending(loop: TaskLoop, *, failed: bool) -> Flow[TaskEnd | None]:
    """A request that would not fit the window, by the provider's count as learned (the
    uncertainty of an unmeasured session priced in), is made to fit before it is sent, even
    right after a compaction (the guard against compacting twice is for the 50% trigger, not
    for a request that would be refused): a refusal is the exception, not the plan. ``failed``:
    the 50% trigger's compaction for this call failed. Where
    the fixed part leaves no room under half the window, that is said once per task."""
    if not loop.window.half_leaves_room and not loop.said_fixed_part:
        loop.said_fixed_part = True
        window = loop.window
        yield Say(
            f"note: the system prompt and the tool definitions take about "
            f"{window.provider(window.overhead_local):,} of the {window.tokens:,} tokens of "
            "the window, so a compaction cannot leave the session under half of it; seri keeps "
            "each request within the whole window instead"
        )
    if failed or loop.window.request_fits(loop.request_size()):
        # (An automatic compaction that failed just now is not tried again for this call:
        # fail-soft, the request goes out and the overflow retry is the one more chance.)
        return None
    if not loop.setup.auto_compact:
        detail = auto_off_detail("")
        yield Record(events.TurnEnd(status="overflow", turns=loop.turns, error=detail))
        return loop.end("overflow", detail=detail)
    looping = loop_verdict(
        loop.last, _history_room(loop.window), _min_growth(loop.window), required=True
    )
    if looping:
        return (yield from _exhausted(loop, looping))
    why_not = yield from loop.make_fit("auto", room=loop.window.request_room_local)
    if why_not is not None and why_not.reason is not Why.NO_CUT:
        yield Say(f"warning: the request may be too long for the window: {why_not.detail}")
    return None


def _bodiless_overflow(reply: ModelReply | ModelFailed, loop: TaskLoop) -> ModelReply | ModelFailed:
    """A bodiless 400 on a big request is taken for an overflow (``probable_overflow``)."""
    if not isinstance(reply, ModelFailed) or reply.overflow or reply.refused is None:
        return reply
    estimate, window = loop.estimate(), loop.window.tokens
    if not reply.refused.probable_overflow(estimate, window):
        return reply
    why = (
        f"{reply.error}: no body, on a request of about {estimate:,} tokens of the "
        f"{window:,}-token window, so taken for an overflow"
    )
    return attrs.evolve(reply, overflow=True, error=why)


def _send(loop: TaskLoop) -> Flow[ModelReply | ModelFailed]:
    """The turn request, its local size noted for comparing with the provider's count."""
    loop.request_local = loop.request_size()
    request = CallModel(tuple(loop.history), "turn", loop.setup.system_prompt)
    reply, loop.budget = yield from call_within_budget(request, loop.budget)
    return reply


def overflow_keep_tokens(keep_tokens: int, refused_estimate: int) -> int:
    """The keep budget of the compaction that answers a provider's "too long".

    The usual budget cannot be trusted here: an automatic compaction may have just chosen the
    tail that was refused, and cutting the same history by the same budget finds the same tail
    again (no cut, so the overflow retry could never happen). And the window seri believed in
    was evidently too large. So this one compaction keeps at most a quarter of what was refused.
    Both in local tokens.
    """
    return max(1, min(keep_tokens, refused_estimate // 4))
