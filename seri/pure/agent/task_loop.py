"""The working state of one task (``TaskLoop``): its history as the requests show it, the
window as learned, the cap on tool results, and compaction with the shrink ladder.

It is mutable and lives only inside one call of ``run_task`` or ``compact_on_demand``
(``seri.pure.agent.turn``); what it hands back is a ``Conversation`` and a ``TaskEnd``.
The summarizer and the shrink ladder are imported where they are used: a `seri chat -p`
loads this module before its first request, and a call that never compacts never needs them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from seri.pure.agent.effects import (
    Flow,
    Persist,
    Record,
    ShrinkPayloads,
    SpillText,
    UpdateCounters,
    perform,
)
from seri.pure.agent.task_records import Conversation, EndStatus, TaskEnd, TaskSetup
from seri.pure.compaction.compaction_contract import LastCompaction
from seri.pure.compaction.compaction_outcome import (
    CHANGED,
    Compacted,
    NotCompacted,
    Why,
    does_not_fit,
)
from seri.pure.compaction.result_cap import cap_result, needs_cap, whole_size
from seri.pure.compaction.tokens import (
    FRAMING_TOKENS,
    estimate_tokens,
    history_estimate,
    message_chars,
)
from seri.pure.compaction.window import Window
from seri.pure.extensions import hook_points
from seri.pure.provider.token_prior import prior_scale
from seri.pure.session.records import Message
from seri.pure.tools.tool_definitions import definition_chars_by_server
from seri.pure.trajectories import history_events


class TaskLoop:
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
        self.pending_record: history_events.Compaction | None = None
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
        from seri.pure.compaction.compaction import (
            compact,  # the summarizer: see the module docstring
        )

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

    def take_pending_record(self) -> history_events.Compaction | None:
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
        from seri.pure.compaction.recap_paths import arguments_path
        from seri.pure.compaction.shrink import elided_payload, plan_shrink, with_elided

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
            history_events.Shrink(
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
