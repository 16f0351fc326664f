"""Compaction as a sequence of effects: find the cut, fold the evicted part into the recap, swap.

The same primitive serves the automatic trigger, the overflow retry, ``/compact`` and ``seri
compact``; only the trigger name and the focus words differ.

The summarizer sees everything that is evicted. When that does not fit one request, it is
folded: chunk by chunk, oldest first, each call updating the recap the previous one made (the
spec's update rule), every request sized to fit the window (``seri.pure.fold``). A refused
summarizer request is shrunk by the numbers the provider stated and retried once. What a
provider reports about each request teaches the window its scale (``seri.pure.window``); when
the scale grows during a fold, the kept tail is cut again by the new budget and the fold goes
on over what that adds to the evicted part.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Sequence

import attrs

from seri.pure import events, history_events
from seri.pure.compaction_contract import contract_marks, fitted_task, task_in_hand
from seri.pure.compaction_outcome import (
    CHANGED,
    NO_CUT,
    Compacted,
    CompactionOutcome,
    NotCompacted,
    Why,
    does_not_fit,
)
from seri.pure.cuts import Cut, cut_messages
from seri.pure.effects import (
    ApplyCompaction,
    CallModel,
    Flow,
    ModelFailed,
    ModelReply,
    Record,
    perform,
)
from seri.pure.fold import Chunk, next_chunk
from seri.pure.output_budget import OutputBudget, call_within_budget
from seri.pure.recap import Recap, merge_paths, merge_recap, render_recap
from seri.pure.recap_answer import parse_recap_answer
from seri.pure.recap_paths import TouchedPaths, paths_touched
from seri.pure.records import Message
from seri.pure.shrink import Payload, elided_payload, plan_shrink, saving, with_elided
from seri.pure.token_prior import MOST_DENSITY, prior_density
from seri.pure.tokens import bytes_per_char, estimate_tokens, messages_chars, sized_tokens
from seri.pure.window import (
    DENSITY_STEPS,
    FILL,
    UNMEASURED_SCALE,
    Window,
    density_step,
    refused_density,
    stated_prompt_tokens,
)

# A scale learned during a fold cuts the kept tail again when it grew by more than this much
# (a denser tokenizer than assumed); smaller changes are noise a recut would pay a call for.
RECUT_GROWTH = 1.25
# The smallest recap rendering budget, in characters: the bare bones of a recap.
MIN_RECAP_CHARS = 1_200


# A glob rule arrives as a message when it fires. Evicting that message must not
# take the rule out of force, so the recap carries the text of every rule that fired
# (``Recap.rules``), and its message shows them under this heading. An activated skill
# (``seri.pure.skills``) is carried the same way, verbatim.
RULES_HEADING = "\n\n## Project rules in force\n\n"


def rules_in_force(evicted: Sequence[Message], previous: Recap | None) -> tuple[str, ...]:
    """The rules the previous recap carried, then those whose messages are being evicted.

    A previous recap stored before seri kept its rules as a field (``rules`` is None) has
    them in its text only: that recap's message, evicted now, is read for them this once.
    """
    carried = previous.rules if previous is not None else None
    found = list(carried or ())
    for message in evicted:
        if message.kind in ("rule", "skill") or is_skill_activation(message):
            found.append(message.text)
        elif message.kind == "recap" and carried is None:
            found.extend(_rules_in_text(message.text))
    texts: dict[str, str] = {}
    for text in found:
        texts.setdefault(text.split("]", 1)[0], text.strip())
    return tuple(texts.values())


def is_skill_activation(message: Message) -> bool:
    """An activated skill's content (``activate_skill``'s answer): carried like a rule."""
    from seri.pure.skills import ACTIVATE_SKILL, SKILL_MESSAGE_PREFIX

    return (
        message.role == "tool"
        and message.tool_name == ACTIVATE_SKILL
        and not message.is_error
        and message.text.startswith(SKILL_MESSAGE_PREFIX)
    )


def _rules_in_text(text: str) -> list[str]:
    """The rules section of a recap message written before the rules were a field."""
    if RULES_HEADING not in text:
        return []
    section = text.split(RULES_HEADING, 1)[1]
    found = ["[rule " + part for part in section.split("\n[rule ") if part]
    found[0] = found[0].removeprefix("[rule ")
    return found


def rules_section(rules: Sequence[str]) -> str:
    return RULES_HEADING + "\n".join(rules) if rules else ""


# --- sizes -----------------------------------------------------------------------------------


def recap_chars(window: Window) -> int:
    """How long a recap's rendering may be: half the keep budget (the tail has the rest)."""
    return max(MIN_RECAP_CHARS, keep_local(window) * 2)


def recap_reserve(window: Window, per_char: float = 1.0) -> int:
    """What a summarizer request keeps for the recap it carries (UTF-8 bytes / 4): a recap of
    the most a rendering may take, in the conversation's ``per_char`` bytes a character, and
    its JSON indentation."""
    return estimate_tokens(int(recap_chars(window) * per_char)) + 60


def keep_local(window: Window) -> int:
    """The keep budget a compaction cuts by: at most what it may leave behind."""
    return max(1, min(window.keep_local, window.history_target_local))


def recap_message(recap: Recap, pins: Sequence[str], window: Window) -> Message:
    """The one user message that stands in for the evicted part."""
    text = render_recap(recap, pins, recap_chars(window)) + rules_section(recap.rules or ())
    return Message(role="user", text=text, kind="recap")


def tail_budget(window: Window, previous: Recap | None, pins: Sequence[str], keep: int) -> int:
    """The kept tail's share of the keep budget: what the recap leaves of it."""
    recap = estimate_tokens(len(render_recap(previous or Recap(), pins, recap_chars(window))))
    return max(1, keep - recap)


def find_cut(
    history: Sequence[Message],
    previous: Recap | None,
    pins: Sequence[str],
    window: Window,
    keep: int | None,
) -> Cut | None:
    budget = keep_local(window) if keep is None else keep
    return cut_messages(history, tail_budget(window, previous, pins, budget))


# --- compaction ------------------------------------------------------------------------------


def compact(
    history: Sequence[Message],
    previous: Recap | None,
    *,
    window: Window,
    elide_bytes: int,
    trigger: str,
    focus: str = "",
    project: str = "",
    pins: Sequence[str] = (),
    estimate_before: int | None = None,
    keep: int | None = None,
    stored: Sequence[Message] | None = None,
    budget: OutputBudget | None = None,
    defer_record: bool = False,
) -> Flow[CompactionOutcome]:
    """Compact ``history``; the interpreter applies the swap atomically or reports a conflict.

    ``keep`` overrides the keep budget (local tokens); ``window`` is the window as known so
    far, and the outcome carries it as the summarizer calls left it. ``stored`` is the history
    as the store keeps it, where ``history`` (what requests carry) shows long tool results cut
    to the window's cap: the cut is made by what is sent, the summarizer reads what is stored
    (elided as usual, so it is told each payload's real size). ``budget`` is the answer
    budget the summarizer's requests go out with; the outcome carries it as they left it.
    ``defer_record``: the compaction event is left to the caller (in the outcome), which
    records it once it knows whether the session now fits (one outcome, one message).
    """
    cut = find_cut(history, previous, pins, window, keep)
    # The recap is rendered within the budget the fold reserved for it from the start (not
    # one a scale learned on the way would allow): what the dry run counts it at, at most.
    rendered_for = window
    if cut is None:
        return attrs.evolve(NO_CUT, window=window, budget=budget)
    overhead = window.overhead_chars
    before = (
        estimate_before
        if estimate_before is not None
        else estimate_tokens(overhead + messages_chars(history))
    )
    # Announced before the summarizer is called (the contract: no compaction unannounced).
    yield Record(
        history_events.CompactionStart(
            trigger=trigger,
            evicting=cut.index_of_first_kept,
            estimate_before=before,
            context_window=window.tokens,
        )
    )
    read = history if stored is None else stored
    fold = Fold(read, previous, window, elide_bytes, focus, project, budget or OutputBudget())
    end = cut.index_of_first_kept
    while fold.done < end:
        failed = yield from fold.step(end)
        if failed is not None:
            return attrs.evolve(failed, window=fold.window, budget=fold.budget)
        if fold.window.scale > window.scale * RECUT_GROWTH:
            # A denser tokenizer than assumed: the same budget keeps fewer messages.
            recut = find_cut(history, previous, pins, fold.window, _rescaled(keep, window, fold))
            if recut is not None and recut.index_of_first_kept > end:
                end = recut.index_of_first_kept
            window = fold.window
    window = fold.window
    assert fold.recap is not None
    evicted = history[:end]
    kept = tuple(history[end:])
    recap = _with_paths(fold.recap, paths_touched(evicted, project))
    task = task_in_hand(history, end, previous.task if previous else "")
    carried = fitted_task(task, recap_chars(rendered_for))
    recap = attrs.evolve(recap, rules=rules_in_force(evicted, previous), task=carried)
    message = recap_message(recap, pins, rendered_for)
    marks = contract_marks(history, end, message, pins, task)
    after = estimate_tokens(overhead + messages_chars((message, *kept)))
    applied = yield from perform(
        ApplyCompaction(
            evicted=len(evicted),
            recap=recap,
            recap_message=message,
            trigger=trigger,
            focus=focus,
            estimate_before=before,
            estimate_after=after,
            summary_calls=fold.calls,
            token_scale=window.scale if window.measured else 0.0,
            task_kept=marks.task_kept,
            goal_kept=marks.goal_kept,
            cache_rewrite_tokens=marks.cache_rewrite_tokens,
        )
    )
    if not applied:
        return attrs.evolve(CHANGED, window=window, budget=fold.budget)
    event = history_events.Compaction(
        trigger=trigger,
        focus=focus,
        evicted=len(evicted),
        kept=len(kept),
        estimate_before=before,
        estimate_after=after,
        summary_calls=fold.calls,
        token_scale=round(window.scale, 3),
    )
    if not defer_record:
        yield Record(event)
    return Compacted((message, *kept), recap, len(evicted), fold.calls, window, fold.budget, event)


def _rescaled(keep: int | None, before: Window, fold: Fold) -> int | None:
    """An explicit keep budget (local tokens) carried over to a denser scale."""
    if keep is None:
        return None
    return max(1, int(keep * before.scale / fold.window.scale))


def _with_paths(recap: Recap, touched: TouchedPaths) -> Recap:
    paths = merge_paths(TouchedPaths(recap.read_paths, recap.modified_paths), touched)
    return attrs.evolve(recap, read_paths=paths.read, modified_paths=paths.modified)


class Fold:
    """The summarizer's pass over the evicted part, one request a step, oldest first."""

    def __init__(
        self,
        history: Sequence[Message],
        previous: Recap | None,
        window: Window,
        elide_bytes: int,
        focus: str,
        project: str,
        budget: OutputBudget | None = None,
    ) -> None:
        self.history = history
        self.recap = previous
        self.window = window
        self.elide_bytes = elide_bytes
        self.focus = focus
        self.project = project
        self.done = 0
        self.calls = 0
        self.budget = budget or OutputBudget()
        per_char = bytes_per_char(history)
        # The density chunks are sized by (provider tokens per UTF-8 bytes / 4). Never
        # measured: the first request is sized by the prior its own text gives (``chunk``),
        # and its reply sets the density (a step of DENSITY_STEPS) for the rest; the dry run
        # plans each step.
        self.first = not window.measured
        self.density = MOST_DENSITY if self.first else density_step(window.scale / per_char)
        self.recap_reserve = recap_reserve(window, per_char)

    def showed(self, density: float) -> None:
        """What a reply's usage showed: the first one sets the density; a later one raises it
        only when denser than the room's margin covers (so that the fold makes the chunks its
        dry run planned for that step, and never a request that would be refused)."""
        if self.first or density * FILL > self.density:
            self.density = density_step(density)
        self.first = False

    def chunk(self, end: int, at_most: int | None = None) -> Chunk:
        if not self.first:
            return self.sized_chunk(end, self.density, at_most)
        # Never measured: sized by what its own text is priced at (``prior_density``), first
        # that of the part to fold, then, when the chunk it gives is denser, that chunk's own
        # (a chunk of JSON in a history of prose), until the chunk is no denser than it was
        # sized for; the densest price ends it, whatever the text.
        density = prior_density(self.texts(self.done, end))
        for _ in range(3):
            chunk = self.sized_chunk(end, density, at_most)
            needed = prior_density(m.text for m in chunk.request)
            if needed <= density:
                break
            density = needed
        else:
            density = MOST_DENSITY
            chunk = self.sized_chunk(end, density, at_most)
        self.density = density
        return chunk

    def texts(self, start: int, end: int) -> Iterator[str]:
        for m in self.history[start:end]:
            yield from (m.text, m.reasoning, *(call.arguments for call in m.tool_calls))

    def sized_chunk(self, end: int, density: float, at_most: int | None) -> Chunk:
        room = self.window.summary_room(density)
        return next_chunk(
            self.history,
            self.done,
            end,
            self.recap,
            room_tokens=room if at_most is None else min(room, at_most),
            focus=self.focus,
            elide_bytes=self.elide_bytes,
            project=self.project,
            recap_reserve=self.recap_reserve,
        )

    def step(self, end: int) -> Flow[NotCompacted | None]:
        """Summarize the next chunk before ``end``; None when done, else why it failed."""
        chunk = self.chunk(end)
        reply = yield from self.ask(chunk)
        if isinstance(reply, ModelFailed) and reply.overflow:
            # Shrunk by what the provider said, and tried once more.
            sized_for = self.density * chunk.local_tokens / max(1, chunk.char_tokens)
            self.window = self.window.refused(
                reply.overflow_numbers, chunk.char_tokens, sized_for=sized_for
            )
            stated = stated_prompt_tokens(reply.overflow_numbers) or 0
            self.density = refused_density(self.density, stated, chunk.local_tokens)
            self.first = False
            yield Record(
                events.Overflow(
                    error=reply.error,
                    estimate=chunk.local_tokens,
                    purpose="summary",
                    token_scale=round(self.window.scale, 3),
                    context_window=self.window.tokens,
                )
            )
            # Never the same request again, whatever the numbers said.
            chunk = self.chunk(end, at_most=chunk.local_tokens * 3 // 4)
            reply = yield from self.ask(chunk)
            if isinstance(reply, ModelFailed) and reply.overflow:
                return _summarizer_failed(
                    "the summarizer's request is too long for the window even after shrinking "
                    f"it to {chunk.local_tokens} tokens (counted as UTF-8 bytes / 4): "
                    f"{reply.error}"
                )
        if not isinstance(reply, ModelReply):
            if reply.session_changed:
                return CHANGED
            return _summarizer_failed(f"the summarizer call failed: {reply.error}")
        if not reply.message.text.strip():
            return _summarizer_failed("the summarizer answered with nothing")
        if reply.finish_reason == "length":
            # Half a recap: its goal would be a fragment of JSON, replacing the real one.
            return _summarizer_failed(
                "the summarizer's answer was cut off at its output limit of "
                f"{summary_budget(self.budget, self.window).lowered:,} tokens (finish_reason "
                "length): the recap would be a fragment"
            )
        if reply.usage is not None and reply.usage.input_tokens > 0:
            self.window = self.window.learned(reply.usage.input_tokens, chunk.char_tokens)
            self.showed(reply.usage.input_tokens / chunk.local_tokens)
        answer = parse_recap_answer(reply.message.text)
        self.recap = merge_recap(self.recap, answer, (), ())
        self.done = chunk.end
        return None

    def ask(self, chunk: Chunk) -> Flow[ModelReply | ModelFailed]:
        """One summarizer request (refused ones count too), with its own answer budget."""
        sent = summary_budget(self.budget, self.window)
        reply, came_back = yield from call_within_budget(CallModel(chunk.request, "summary"), sent)
        if came_back.lowered != sent.lowered:
            # A 402 named what the credit can pay for: that holds for the run's answers too.
            self.budget = attrs.evolve(self.budget, lowered=came_back.lowered)
        self.calls += 1
        return reply


def summary_budget(run: OutputBudget, window: Window) -> OutputBudget:
    """The answer budget of a summarizer request: the room the request leaves free for its
    answer (``Window.answer_tokens``), never the person's ``sampling.max_tokens`` when that is
    smaller (the person's cap is for answers, not for seri's own bookkeeping: with
    ``max_tokens: 200`` every recap was cut off), and never more than a 402 said the credit
    can pay for."""
    room = max(1, window.answer_tokens)
    lowered = room if run.lowered is None else min(room, run.lowered)
    return attrs.evolve(run, lowered=lowered)


def _summarizer_failed(detail: str) -> NotCompacted:
    return NotCompacted(Why.SUMMARIZER_FAILED, detail)


# --- a plan, for `seri compact --dry-run` ----------------------------------------------------


@attrs.frozen
class CompactionPlan:
    """What a compaction would do, without calling the model or changing anything.

    ``chunks`` are the fold's requests as planned for ``density`` (each request's room is
    reserved for the most a recap may take, so they do not depend on what the summarizer
    answers). A session never measured is planned for every step of ``DENSITY_STEPS`` up to
    the densest assumed (``by_density``: step, requests): its first request is sized for the
    densest, and its reply shows which step the rest follows; ``chunks`` are then those of the
    sparsest step. The cut and ``estimate_after`` (the recap to come counted at the most its
    rendering may take) do not depend on the step; whether the result fits does (the fold's
    last reply measures the scale it is judged at), so ``by_density`` gives it per step and
    ``would_fail`` is the densest step's. ``shrink`` is what the ladder would elide if the
    result did not fit.
    """

    window: Window
    cut: Cut | None
    estimate_before: int
    estimate_after: int
    chunks: tuple[Chunk, ...]
    shrink: tuple[Payload, ...]
    # Why the compaction would fail (exit 1) even after the ladder, as it would say it; "".
    would_fail: str = ""
    density: float = 1.0
    # (step, requests, why it would fail at that step or "").
    by_density: tuple[tuple[float, int, str], ...] = ()


def plan_compaction(
    history: Sequence[Message],
    previous: Recap | None,
    *,
    window: Window,
    elide_bytes: int,
    focus: str = "",
    project: str = "",
    pins: Sequence[str] = (),
    estimate_before: int,
    stored: Sequence[Message] | None = None,
) -> CompactionPlan:
    """``history`` and ``stored`` as for ``compact``."""
    cut = find_cut(history, previous, pins, window, None)
    end = cut.index_of_first_kept if cut is not None else 0
    read = history if stored is None else stored
    fold = Fold(read, previous, window, elide_bytes, focus, project)
    steps = [s for s in DENSITY_STEPS if s <= UNMEASURED_SCALE] if fold.first else [fold.density]
    planned = [(step, planned_chunks(fold, end, step)) for step in steps]
    density, chunks = planned[0]
    kept = tuple(history[end:])
    recap: tuple[Message, ...] = ()
    if cut is not None:
        rules = rules_in_force(history[:end], previous)
        task = fitted_task(
            task_in_hand(history, end, previous.task if previous else ""), recap_chars(window)
        )
        recap = (
            recap_message(attrs.evolve(previous or Recap(), rules=rules, task=task), pins, window),
        )
    history_after = (*recap, *kept)
    # The recap to come counted at the most its rendering may take: an upper bound on what
    # the real compaction leaves.
    recap_room = sum(len(m.text) for m in recap)
    if recap:
        section = rules_section(rules_in_force(history[:end], previous))
        recap_room = max(recap_room, recap_chars(window) + len(section))
    kept_chars = messages_chars(kept)
    after = estimate_tokens(window.overhead_chars + kept_chars + recap_room)
    judged = [
        (
            step,
            found,
            fit_after(window_after(window, found, step), history_after, pins, elide_bytes),
        )
        for step, found in planned
    ]
    shrink, would_fail = judged[-1][2]
    return CompactionPlan(
        window,
        cut,
        estimate_before,
        after,
        chunks,
        shrink,
        would_fail,
        density,
        tuple((step, len(found), fails) for step, found, (_, fails) in judged),
    )


def window_after(window: Window, chunks: Sequence[Chunk], density: float) -> Window:
    """The window a fold of ``chunks`` leaves when each reply shows ``density``: measured by
    its last request (as ``Fold.step`` learns it), or ``window`` when there is none."""
    if not chunks:
        return window
    last = chunks[-1]
    return window.learned(math.ceil(density * last.local_tokens), last.char_tokens)


def fit_after(
    window: Window, history_after: Sequence[Message], pins: Sequence[str], elide_bytes: int
) -> tuple[tuple[Payload, ...], str]:
    """What the shrink ladder would elide of ``history_after`` judged by ``window``, and why
    it would still not fit ("" when it would)."""
    limit = window.history_target_local
    excess = sized_tokens(history_after) - limit
    shrink = plan_shrink(history_after, excess, elide_bytes)
    if excess <= sum(saving(payload) for payload in shrink):
        return shrink, ""
    shrunk = list(history_after)
    for payload in shrink:
        marker = elided_payload(len(payload.text.encode("utf-8", "surrogatepass")))
        shrunk[payload.index] = with_elided(shrunk[payload.index], payload, marker)
    if sized_tokens(shrunk) > limit:
        return shrink, does_not_fit(window, shrunk, pins, limit)
    return shrink, ""


def planned_chunks(start: Fold, end: int, density: float) -> tuple[Chunk, ...]:
    """The chunks a fold from ``start`` makes before ``end`` when each reply shows
    ``density`` (``start`` itself is left as it is)."""
    fold = copy.copy(start)
    chunks: list[Chunk] = []
    while fold.done < end:
        chunk = fold.chunk(end)
        chunks.append(chunk)
        fold.done = chunk.end
        fold.showed(density)
    return tuple(chunks)
