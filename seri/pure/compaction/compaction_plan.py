"""A compaction's plan, for `seri compact --dry-run`: what it would cut, the summarizer
requests it would make, what it would leave and whether that fits, without calling the model
or changing anything."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import attrs

from seri.pure.compaction.carried_rules import rules_in_force, rules_section
from seri.pure.compaction.compaction_contract import fitted_task, task_in_hand
from seri.pure.compaction.compaction_outcome import does_not_fit
from seri.pure.compaction.compaction_sizes import find_cut, recap_chars, recap_message
from seri.pure.compaction.cuts import Cut
from seri.pure.compaction.fold import Chunk
from seri.pure.compaction.recap import Recap
from seri.pure.compaction.shrink import Payload, elided_payload, plan_shrink, saving, with_elided
from seri.pure.compaction.summarizer_fold import SummaryFold
from seri.pure.compaction.tokens import estimate_tokens, messages_chars, sized_tokens
from seri.pure.compaction.window import DENSITY_STEPS, UNMEASURED_SCALE, Window
from seri.pure.session.records import Message


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
    fold = SummaryFold(read, previous, window, elide_bytes, focus, project)
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
    its last request (as ``SummaryFold.step`` learns it), or ``window`` when there is none."""
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


def planned_chunks(start: SummaryFold, end: int, density: float) -> tuple[Chunk, ...]:
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
