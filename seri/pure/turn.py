"""One task: model turns until the model answers without asking for a tool.

``run_task`` is a generator of effects (``seri.pure.effects``). It owns every
decision: the turn budget, when to compact, what happens on overflow, which
tool calls may run, that every tool call gets exactly one result, which rules
fire. The interpreter (``seri.runtime.interpreter``) only carries the effects out.

What only a tool call (permissions, approval rules), a compaction or the shrink ladder
needs is imported where it is used: a `seri chat -p` loads this module before its first
request, and those modules cost start-up time a call without tools never needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import attrs

from seri.pure import events, hook_points
from seri.pure.compaction_contract import (
    LastCompaction,
    auto_off_detail,
    exhausted_detail,
    loop_verdict,
)
from seri.pure.compaction_outcome import CHANGED, Compacted, NotCompacted, Why, does_not_fit
from seri.pure.effects import (
    AskPerson,
    CallModel,
    CheckEdit,
    CountSpending,
    Flow,
    ModelFailed,
    ModelReply,
    Persist,
    Record,
    ResolvedPath,
    ResolvePath,
    RunTool,
    Say,
    ShrinkPayloads,
    SpillText,
    ToolRun,
    UpdateCounters,
    perform,
)
from seri.pure.output_budget import OutputBudget, call_within_budget
from seri.pure.permission_policy import Policy, with_allowed
from seri.pure.records import Message, ToolCall
from seri.pure.result_cap import cap_result, needs_cap, whole_size
from seri.pure.rules import GlobRule, rules_fired_by
from seri.pure.token_prior import prior_scale
from seri.pure.tokens import (
    FRAMING_TOKENS,
    estimate_tokens,
    history_estimate,
    message_chars,
    should_compact,
)
from seri.pure.tool_arguments import parse_arguments
from seri.pure.tool_definitions import definition_chars_by_server
from seri.pure.tool_specs import ToolSpec, find_spec
from seri.pure.window import Window

if TYPE_CHECKING:
    from seri.pure.recap import Recap

# "refused": the prompt alone is too big for the window; nothing was stored.
EndStatus = Literal[
    "done",
    "max_turns",
    "budget",
    "error",
    "interrupted",
    "overflow",
    "length",
    "refused",
    # A goal run's own ends (seri.pure.goals), and the compaction contract's no-loop rule.
    "stalled",
    "max_checks",
    "wall",
    "context_exhausted",
]

INTERRUPTED_RESULT = "interrupted by user: the tool call did not finish"
NOT_RUN_RESULT = "not run: the turn was interrupted before this call"


@attrs.frozen
class TaskSetup:
    """What stays fixed for a task: frozen prompt, budget, window, policy."""

    system_prompt: str
    max_turns: int
    context_window: int
    keep_tokens: int
    elide_bytes: int
    policy: Policy
    interactive: bool
    # The tools offered, as records (built-in ones and those of MCP servers that are up).
    tools: tuple[ToolSpec, ...]
    glob_rules: tuple[GlobRule, ...] = ()
    # Characters of the tool definitions every turn request carries (they fill the window too).
    tool_chars: int = 0
    # The session's project: recap paths are relative to it.
    project: str = ""
    # The configured answer budget (sampling max_tokens), kept free in every request.
    max_tokens: int | None = None
    # The answer budget requests go out with, as this run has it so far (see OutputBudget).
    budget: OutputBudget = attrs.field(factory=OutputBudget)
    # The run's cost budget in USD (--max-budget-usd; None: none): no call starts once the
    # run's reported cost has reached it (see seri.pure.cost_budget).
    max_budget_usd: float | None = None
    # compaction.auto: false never compacts without being asked; an overflow fails the turn.
    auto_compact: bool = True
    # The hook events the session has hooks for (seri.pure.hook_points asks only those).
    hook_events: frozenset[str] = frozenset()

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(spec.name for spec in self.tools)

    def window(self, token_scale: float = 0.0, learned_window: int = 0) -> Window:
        """The window as this task starts, with the scale learned so far (0: none yet) and
        the window a provider stated when it is smaller than the configured one (0: none)."""
        tokens = self.context_window
        if 0 < learned_window < tokens:
            tokens = learned_window
        return Window.of(
            tokens,
            self.keep_tokens,
            overhead_chars=len(self.system_prompt) + self.tool_chars,
            max_tokens=self.max_tokens,
            scale=token_scale,
        )


@attrs.frozen
class Conversation:
    """A session's conversation as the loop sees it; ``total_chars`` is kept incrementally."""

    history: tuple[Message, ...]
    recap: Recap | None = None
    total_chars: int = 0
    last_input_tokens: int = 0
    fired_rules: frozenset[str] = frozenset()
    # Provider tokens per local token, as learned (0: never measured).
    token_scale: float = 0.0
    # Notes carried verbatim in every recap (/pin, seri pin).
    pins: tuple[str, ...] = ()
    # The window a provider's overflow answer stated, when smaller than the configured one.
    learned_window: int = 0
    # This run's last compaction, for the no-loop rule (seri.pure.compaction_contract).
    last_compaction: LastCompaction | None = None


@attrs.frozen
class TaskEnd:
    status: EndStatus
    answer: str
    conversation: Conversation
    turns: int
    detail: str = ""
    # Ended by the person's Ctrl-C, not by a cut stream: the exit status is then 130.
    by_user: bool = False
    # The answer budget as the run has it now (lowered for the rest of the run by a 402).
    budget: OutputBudget = attrs.field(factory=OutputBudget)


def conversation_of(
    history: Sequence[Message],
    recap: Recap | None,
    last_input_tokens: int,
    total_chars: int | None = None,
    fired_rules: frozenset[str] = frozenset(),
    *,
    token_scale: float = 0.0,
    pins: tuple[str, ...] = (),
    learned_window: int = 0,
) -> Conversation:
    chars = sum(message_chars(m) for m in history) if total_chars is None else total_chars
    return Conversation(
        tuple(history),
        recap,
        chars,
        last_input_tokens,
        fired_rules,
        token_scale,
        tuple(pins),
        learned_window,
    )


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


class _Loop:
    """Mutable working state of one task; lives only inside ``run_task``."""

    def __init__(self, setup: TaskSetup, conversation: Conversation) -> None:
        self.setup = setup
        self.history = list(conversation.history)
        self.recap = conversation.recap
        self.chars = conversation.total_chars
        self.billed = conversation.last_input_tokens
        self.fired = set(conversation.fired_rules)
        self.pins = conversation.pins
        self.window = setup.window(conversation.token_scale, conversation.learned_window)
        self.turns = 0
        # Stored results shown cut (see ``cap_history``): id of the cut view -> (the view, the
        # stored message, the spill file with its whole text).
        self.cut_views: dict[int, tuple[Message, Message, str]] = {}
        self.capped_at = 0
        # The local size of the last turn request, to compare with what the provider counted.
        self.request_local = 0
        # The setup's policy, plus the rules a person allowed "always" during this task.
        self.policy = setup.policy
        self.budget = setup.budget
        # Whether the fixed part's share of the window was said (once a task).
        self.said_fixed_part = False
        # A compaction's record, held until make_fit knows whether the session fits.
        self.pending_record: events.Compaction | None = None
        # The run's last compaction (carried from task to task): the no-loop rule's facts,
        # and the local tokens added since, after which a compaction may follow another.
        self.last = conversation.last_compaction

    def add(self, messages: Sequence[Message]) -> Persist:
        self.history.extend(messages)
        added = sum(message_chars(m) for m in messages)
        self.chars += added
        if self.last is not None:
            self.last = attrs.evolve(self.last, grown=self.last.grown + estimate_tokens(added))
        return Persist(tuple(messages))

    def history_local(self) -> int:
        """The history as compaction sizes it: ``ceil(chars / 4)`` and each message's framing."""
        return estimate_tokens(self.chars) + FRAMING_TOKENS * len(self.history)

    def request_size(self) -> int:
        """A turn request's local size as sized: the history, the system prompt and tools."""
        return self.history_local() + self.window.overhead_local

    def estimate(self) -> int:
        return history_estimate(self.billed, self.chars + self.window.overhead_chars)

    def priced_window(self) -> Window:
        """The window to size the next request by (``Window.priced``): a session never
        measured is priced by its own text (``prior_scale``)."""
        if self.window.measured:
            return self.window
        prior = prior_scale(self.history, self.window.overhead_local)
        return self.window.priced(self.request_size(), prior)

    def conversation(self) -> Conversation:
        """The conversation as stored: a stored result shown cut in this task's requests is
        whole again (the next task cuts it afresh, and a compaction reads it whole)."""
        scale = self.window.scale if self.window.measured else 0.0
        shown = {id(m) for m in self.history}
        whole = sum(
            message_chars(stored) - message_chars(view)
            for key, (view, stored, _) in self.cut_views.items()
            if key in shown
        )
        return Conversation(
            tuple(self.stored_history()),
            self.recap,
            self.chars + whole,
            self.billed,
            frozenset(self.fired),
            scale,
            self.pins,
            self.learned_window(),
            self.last,
        )

    def learned_window(self) -> int:
        """The window as a provider's overflow answer stated it, if below the configured one."""
        tokens = self.window.tokens
        return tokens if tokens < self.setup.context_window else 0

    def counters(self, *, turns: bool = True) -> UpdateCounters:
        """What the session keeps of this task's counting; ``turns=False`` (a compaction on
        demand, which runs no turns) leaves the stored turn count as it is."""
        scale = self.window.scale if self.window.measured else 0.0
        used = self.turns if turns else None
        return UpdateCounters(used, self.billed, scale, self.learned_window())

    def end(
        self, status: EndStatus, answer: str = "", detail: str = "", *, by_user: bool = False
    ) -> TaskEnd:
        return TaskEnd(
            status, answer, self.conversation(), self.turns, detail, by_user, self.budget
        )

    # -- the window's cap on one tool result ---------------------------------------------------

    def cap_history(self) -> Flow[None]:
        """Show stored tool results over the window's cap cut, as a new result would be.

        The store keeps every byte; the request carries the cut form, whose marker names a
        spill file with the whole text. Done when a task starts and again when the learned
        scale shrinks the cap, so its cost is per task, not per call.
        """
        cap = self.window.result_cap_chars
        if self.capped_at and cap * 10 >= self.capped_at * 9:
            return
        self.capped_at = cap
        for index, message in enumerate(self.history):
            if message.role != "tool":
                continue
            view_of = self.cut_views.get(id(message))
            stored, spill = (view_of[1], view_of[2]) if view_of else (message, "")
            if not needs_cap(stored.text, cap):
                continue
            if not spill:
                spill = yield from perform(SpillText(stored.text))
            view = attrs.evolve(stored, text=cap_result(stored.text, cap, spill))
            self.history[index] = view
            self.chars += message_chars(view) - message_chars(message)
            self.cut_views[id(view)] = (view, stored, spill)

    def stored_history(self) -> list[Message]:
        """The history with each cut view replaced by the stored message it shows."""
        views = self.cut_views
        return [views[id(m)][1] if id(m) in views else m for m in self.history]

    def capped_result(self, text: str) -> Flow[str]:
        """A new tool result as it enters the history: cut to the window's cap."""
        cap = self.window.result_cap_chars
        if not needs_cap(text, cap):
            return text
        spill = yield from perform(SpillText(text))
        return cap_result(text, cap, spill)

    # -- compaction and the shrink ladder ------------------------------------------------------

    def compaction(
        self, trigger: str, focus: str = "", keep: int | None = None
    ) -> Flow[NotCompacted | None]:
        """Run one compaction; None on success, else why it did not happen."""
        from seri.pure.compaction import compact  # the summarizer: see the module docstring

        outcome = yield from compact(
            self.history,
            self.recap,
            window=self.window,
            elide_bytes=self.setup.elide_bytes,
            trigger=trigger,
            focus=focus,
            project=self.setup.project,
            pins=self.pins,
            # The frozen system prompt and the tools fill the window too: both ledger numbers
            # count them.
            estimate_before=self.estimate(),
            keep=keep,
            stored=self.stored_history(),
            budget=self.budget,
            defer_record=True,
        )
        if outcome.window is not None:
            self.window = outcome.window
        if outcome.budget is not None:
            self.budget = outcome.budget
        if not isinstance(outcome, Compacted):
            return outcome
        self.pending_record = outcome.event
        if outcome.event is not None:
            freed = outcome.event.estimate_before - outcome.event.estimate_after
            self.last = LastCompaction(freed=max(0, freed))
        self.history = list(outcome.history)
        self.recap = outcome.recap
        self.chars = sum(message_chars(m) for m in self.history)
        kept = {id(m) for m in self.history}
        self.cut_views = {key: v for key, v in self.cut_views.items() if key in kept}
        # The last bill counted the evicted messages; it says nothing about the new history.
        self.billed = 0
        return None

    def make_fit(
        self, trigger: str, focus: str = "", keep: int | None = None, *, room: int | None = None
    ) -> Flow[NotCompacted | None]:
        """Compact, then climb the shrink ladder if the history still does not fit ``room``
        (local tokens; by default what a compaction must leave behind).

        Returns None when something changed and the history fits, ``Why.NO_CUT`` when
        nothing needed to change (no safe cut, and it fits already), else why it does not fit.
        """
        if self.window.fixed_part_fills_window:
            # The system prompt and the tools alone fill the window: no recap can help, so
            # no summarizer is paid for (a llama.cpp slot of n_ctx 256 cost eight calls).
            return NotCompacted(Why.DOES_NOT_FIT, self.too_big(0))
        self.pending_record = None
        yield from hook_points.before_compaction(self.setup, trigger, focus)
        why_not = yield from self.compaction(trigger, focus, keep)
        if why_not is not None and why_not.reason is not Why.NO_CUT:
            return why_not
        outcome = yield from self.fit(trigger, why_not, room)
        event = self.take_pending_record()
        if event is not None:
            # Recorded once the outcome is known: a compaction that did not make the session
            # fit is not shown as a success followed by a failure, but once, as what it is.
            if outcome is not None and outcome.reason is Why.DOES_NOT_FIT:
                event = attrs.evolve(event, still_too_big=outcome.detail)
                outcome = attrs.evolve(
                    outcome,
                    detail=f"the recap was written ({event.estimate_before:,} → "
                    f"{event.estimate_after:,} tokens), but {outcome.detail}",
                )
            yield Record(event)
            yield from hook_points.after_compaction(self.setup, event)
        return outcome

    def take_pending_record(self) -> events.Compaction | None:
        event, self.pending_record = self.pending_record, None
        return event

    def fit(
        self, trigger: str, why_not: NotCompacted | None, room: int | None
    ) -> Flow[NotCompacted | None]:
        """The shrink ladder after a compaction (or none), until the history fits ``room``."""
        limit = self.window.history_target_local if room is None else room
        excess = self.history_local() - limit
        if excess <= 0:
            return why_not
        shrunk = yield from self.shrink(trigger, excess)
        if shrunk < 0:
            return CHANGED
        if self.history_local() > limit:
            return NotCompacted(Why.DOES_NOT_FIT, self.too_big(limit))
        return None

    def shrink(self, trigger: str, excess: int) -> Flow[int]:
        """Elide the oldest oversized payloads until ``excess`` local tokens are saved.

        Returns how many payloads were elided, or -1 when the session changed meanwhile.
        """
        from seri.pure.recap_paths import arguments_path
        from seri.pure.shrink import elided_payload, plan_shrink, with_elided

        plan = plan_shrink(self.history, excess, self.setup.elide_bytes)
        if not plan:
            return 0
        replaced: dict[int, Message] = {}
        for payload in plan:
            current = replaced.get(payload.index, self.history[payload.index])
            view_of = self.cut_views.get(id(self.history[payload.index]))
            if view_of is not None and payload.call is None:
                stored, spill = view_of[1].text, view_of[2]
            else:
                stored = payload.text
                spill = yield from perform(SpillText(stored))
            path = arguments_path(payload.text) if payload.call is not None else None
            size = len(stored.encode("utf-8", "surrogatepass"))
            if payload.call is None:
                # A result stored cut to the cap: its marker says what the tool produced.
                size = whole_size(stored) or size
            marker = elided_payload(size, spill, path or "")
            replaced[payload.index] = with_elided(current, payload, marker)
        before = self.estimate()
        chars = self.chars + sum(
            message_chars(m) - message_chars(self.history[i]) for i, m in replaced.items()
        )
        after = estimate_tokens(chars + self.window.overhead_chars)
        applied = yield from perform(
            ShrinkPayloads(tuple(sorted(replaced.items())), trigger, before, after)
        )
        if not applied:
            return -1
        for index, message in replaced.items():
            self.history[index] = message
        self.chars = chars
        self.billed = 0
        yield Record(
            events.Shrink(
                trigger=trigger,
                elided=len(plan),
                messages=len(replaced),
                estimate_before=before,
                estimate_after=after,
            )
        )
        return len(plan)

    def too_big(self, limit: int) -> str:
        """What is too big, and what to do about it."""
        servers = definition_chars_by_server(self.setup.tools)
        return does_not_fit(self.window, self.history, self.pins, limit, servers)


def run_task(
    setup: TaskSetup, conversation: Conversation, prompt: Message, turns_used: int = 0
) -> Flow[TaskEnd]:
    """Work on ``prompt`` until the model answers without tool calls, or the budget ends."""
    loop = _Loop(setup, conversation)
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
        reply = yield from _model_call(loop)
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
        interrupted = yield from _answer_calls(loop, reply)
        if interrupted:
            yield Record(events.TurnEnd(status="interrupted", turns=loop.turns))
            return loop.end("interrupted", detail="interrupted by user", by_user=True)


def _within_cost_budget(loop: _Loop) -> Flow[TaskEnd | None]:
    """None when the next call may start; else the task's end (budget spent, or a provider
    that reports no cost while a budget is set)."""
    limit = loop.setup.max_budget_usd
    if limit is None:
        return None
    from seri.pure.cost_budget import budget_stop

    spent = yield from perform(CountSpending())
    stop = budget_stop(limit, spent)
    if stop is None:
        return None
    yield Record(events.TurnEnd(status=stop.status, turns=loop.turns, error=stop.detail))
    return loop.end(stop.status, detail=stop.detail)


def prompt_limit_local(window: Window) -> int:
    """The largest prompt a session takes, in local tokens: a third of what a request can hold
    for the history, less one answer (the answer to the prompt before).

    A cut evicts at least ``MIN_EVICTED`` (four) messages, so a history of three messages and
    the new prompt can only be sent whole: even three prompts this size, with an answer between
    them, fit one request, and every later task can compact them away. A larger prompt would be
    stored and then refused by the provider on every ``--continue``.

    The room for the next answer (``answer_tokens``, as large as a configured max_tokens) is
    already out of ``request_room_local``; the answer *in* the history is a typical one
    (``typical_answer_tokens``): taking the configured max_tokens off twice left a 128k window
    with ``max_tokens: 64000`` room for a prompt of one token.
    """
    room = window.request_room_local - window.local(window.typical_answer_tokens)
    return max(1, room // 3)


def oversized_prompt(window: Window, prompt_chars: int, budget_key: str = "max_tokens") -> str:
    """Why a prompt of ``prompt_chars`` characters is refused before it is stored, or "".

    When the prompt would fit beside the default answer room, the configured answer budget is
    what takes the room, and the message says so (naming the sampling key to lower)."""
    size = estimate_tokens(prompt_chars)
    limit = prompt_limit_local(window)
    if size <= limit:
        return ""
    head = (
        f"the prompt is too big for this model's window: {prompt_chars:,} characters, about "
        f"{window.provider(size):,} tokens, and a prompt may take at most about "
        f"{window.provider(limit):,} of the window's {window.tokens:,} tokens"
    )
    default = attrs.evolve(window, answer_tokens=window.typical_answer_tokens)
    if window.answer_tokens > window.typical_answer_tokens and size <= prompt_limit_local(default):
        return (
            f"{head}, because sampling.{budget_key} in config.json keeps "
            f"{window.answer_tokens:,} of them free for the answer; nothing was stored. Lower "
            f"sampling.{budget_key} (or remove it), or use a model with a larger window"
        )
    return (
        f"{head} (a third of what a request holds besides the system prompt, the tools and the "
        "answer); nothing was stored. Save it to a file and ask seri to read that file, or use "
        "a model with a larger window (context_window in config.json)"
    )


def _model_call(loop: _Loop) -> Flow[ModelReply | TaskEnd]:
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
            refusal=reply.refusal or events.ABSENT,
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


def _exhausted(loop: _Loop, why: str) -> Flow[TaskEnd]:
    """The no-loop rule stopped the run: the context is exhausted, hand the session off."""
    detail = exhausted_detail(why, "")
    yield Record(events.TurnEnd(status="context_exhausted", turns=loop.turns, error=detail))
    return loop.end("context_exhausted", detail=detail)


def _fit_before_sending(loop: _Loop, *, failed: bool) -> Flow[TaskEnd | None]:
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


def _bodiless_overflow(reply: ModelReply | ModelFailed, loop: _Loop) -> ModelReply | ModelFailed:
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


def _send(loop: _Loop) -> Flow[ModelReply | ModelFailed]:
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


def _answer_calls(loop: _Loop, reply: ModelReply) -> Flow[bool]:
    """Give every tool call exactly one result; returns True if the person interrupted."""
    interrupted = False
    touched: list[str] = []
    seen_ids: set[str] = set()
    for call in reply.message.tool_calls:
        if interrupted:
            yield loop.add((_result(call, NOT_RUN_RESULT, is_error=True),))
            continue
        run = yield from _one_call(loop, call, reply, seen_ids)
        seen_ids.add(call.id)
        interrupted = run.interrupted
        touched.extend(run.touched_paths)
        yield loop.add((_result(call, run.text, is_error=run.is_error),))
    fired = rules_fired_by(loop.setup.glob_rules, touched, frozenset(loop.fired))
    for rule in fired:
        loop.fired.add(rule.name)
        yield Record(events.Rule(name=rule.name, paths=tuple(touched)))
        yield loop.add((Message(role="user", text=rule.message_text(), kind="rule"),))
    return interrupted


def _result(call: ToolCall, text: str, *, is_error: bool) -> Message:
    return Message(
        role="tool", text=text, tool_call_id=call.id, tool_name=call.name, is_error=is_error
    )


def _one_call(loop: _Loop, call: ToolCall, reply: ModelReply, seen_ids: set[str]) -> Flow[ToolRun]:
    from seri.pure.approval import always_rules
    from seri.pure.permissions import decide

    setup = loop.setup
    yield Record(events.ToolCall(id=call.id, name=call.name, arguments=call.arguments))
    rejection = ""
    if not reply.tool_calls_runnable:
        rejection = f"not run: {reply.unrunnable_reason or 'the call arrived incomplete'}"
    elif call.id in seen_ids:
        rejection = f"not run: duplicate tool call id {call.id}"
    spec = find_spec(setup.tools, call.name)
    if not rejection and spec is None:
        rejection = (
            f"not run: unknown tool '{call.name}'; the tools are {', '.join(setup.tool_names)}"
        )
    arguments: dict[str, Any] = {}
    if not rejection:
        parsed = parse_arguments(call, spec)
        if isinstance(parsed, str):
            rejection = f"not run: {parsed}"
        else:
            arguments = parsed
    if rejection:
        yield Record(events.ToolResult(id=call.id, ok=False, error=rejection))
        return ToolRun(rejection, is_error=True)
    assert spec is not None
    where = ResolvedPath(None, None)
    raw_path = arguments.get(spec.path_args[0]) if spec.path_args else None
    if isinstance(raw_path, str):
        where = yield from perform(ResolvePath(raw_path))
        if where.refused:
            yield Record(
                events.Denial(id=call.id, name=call.name, rule="(project)", reason=where.refused)
            )
            return ToolRun(f"denied: {where.refused}", is_error=True)
    verdict = yield from hook_points.before_tool(setup, call, arguments)
    decision = decide(
        loop.policy,
        call.name,
        arguments,
        project_relative_path=where.relative,
        resolved_path=where.absolute,
        spec=spec,
    )
    decision = hook_points.with_hook(decision, verdict)
    if decision.action == "ask" and _readable(loop.policy, spec, where):
        failed = yield from perform(CheckEdit(call, arguments, str(where.relative)))
        if failed is not None:
            size = len(failed.text.encode("utf-8", "replace"))
            yield Record(
                events.ToolResult(
                    id=call.id, name=call.name, ok=False, bytes=size, text=failed.text
                )
            )
            return failed
    if decision.action == "deny" or (decision.action == "ask" and not setup.interactive):
        reason = decision.reason
        if decision.action == "ask":
            reason = f"{reason}; approval is needed and no one can be asked in this mode"
        text = f"denied by {'rule ' + decision.rule if decision.rule else 'policy'}: {reason}"
        yield Record(
            events.Denial(
                id=call.id, name=call.name, rule=decision.rule, reason=reason, by="policy"
            )
        )
        return ToolRun(text, is_error=True)
    if decision.action == "ask":
        offered = always_rules(
            loop.policy,
            call.name,
            arguments,
            relative_path=where.relative,
            absolute_path=where.absolute,
            spec=spec,
        )
        answer = yield from perform(
            AskPerson(call, decision.reason, arguments, where.relative, offered)
        )
        if not answer.approved:
            said = f"denied by user: {answer.reason}" if answer.reason else "denied by user"
            yield Record(events.Denial(id=call.id, name=call.name, rule="", reason=said, by="user"))
            return ToolRun(said, is_error=True)
        if answer.always:
            loop.policy = with_allowed(loop.policy, answer.always)
            yield Record(events.SessionRule(id=call.id, rules=answer.always))
    run = yield from perform(RunTool(call, arguments, loop.window.result_cap_chars))
    if run.interrupted:
        run = attrs.evolve(run, text=run.text or INTERRUPTED_RESULT, is_error=True)
    whole = len(run.text.encode("utf-8", "replace"))
    run = attrs.evolve(run, text=(yield from loop.capped_result(run.text)))
    run = yield from hook_points.after_tool(setup, call, arguments, run)
    yield Record(
        events.ToolResult(
            id=call.id,
            name=call.name,
            ok=not run.is_error,
            interrupted=run.interrupted,
            bytes=whole,
            # The recorder stores a large result as {"elided": true, "originalBytes": N}.
            text=run.text,
        )
    )
    return run


def _readable(policy: Policy, spec: ToolSpec, where: ResolvedPath) -> bool:
    """Whether an edit may be checked against its file before anyone is asked: only when
    read_file may read that file, so that a refused edit tells the model nothing about a
    file it could not read."""
    if spec.name != "edit" or where.relative is None:
        return False
    from seri.pure.permissions import decide

    read = decide(
        policy,
        "read_file",
        {"path": where.relative},
        project_relative_path=where.relative,
        resolved_path=where.absolute,
    )
    return read.action == "allow"


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
    loop = _Loop(setup, conversation)
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
