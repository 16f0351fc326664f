"""Compaction as a sequence of effects: find the cut, fold the evicted part into the recap, swap.

The same primitive serves the automatic trigger, the overflow retry, ``/compact`` and ``seri
compact``; only the trigger name and the focus words differ.

The summarizer sees everything that is evicted. When that does not fit one request, it is
folded: chunk by chunk, oldest first, each call updating the recap the previous one made (the
spec's update rule), every request sized to fit the window (``seri.pure.compaction.fold``). A
refused summarizer request is shrunk by the numbers the provider stated and retried once. What a
provider reports about each request teaches the window its scale (``seri.pure.compaction.window``);
when the scale grows during a fold, the kept tail is cut again by the new budget and the fold goes
on over what that adds to the evicted part.

Beside it: the summarizer's pass (``summarizer_fold``), the sizes and the cut
(``compaction_sizes``), the rules a recap carries (``carried_rules``), and the dry run's plan
(``compaction_plan``).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from seri.pure.agent.effects import ApplyCompaction, Flow, Record, perform
from seri.pure.compaction.carried_rules import rules_in_force
from seri.pure.compaction.compaction_contract import contract_marks, fitted_task, task_in_hand
from seri.pure.compaction.compaction_outcome import CHANGED, NO_CUT, Compacted, CompactionOutcome
from seri.pure.compaction.compaction_sizes import find_cut, recap_chars, recap_message
from seri.pure.compaction.recap import Recap
from seri.pure.compaction.recap_paths import TouchedPaths, merge_paths, paths_touched
from seri.pure.compaction.summarizer_fold import SummaryFold
from seri.pure.compaction.tokens import estimate_tokens, messages_chars
from seri.pure.compaction.window import Window
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.session.records import Message
from seri.pure.trajectories import history_events

# A scale learned during a fold cuts the kept tail again when it grew by more than this much
# (a denser tokenizer than assumed); smaller changes are noise a recut would pay a call for.
RECUT_GROWTH = 1.25


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
    fold = SummaryFold(
        read, previous, window, elide_bytes, focus, project, budget or OutputBudget()
    )
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


def _rescaled(keep: int | None, before: Window, fold: SummaryFold) -> int | None:
    """An explicit keep budget (local tokens) carried over to a denser scale."""
    if keep is None:
        return None
    return max(1, int(keep * before.scale / fold.window.scale))


def _with_paths(recap: Recap, touched: TouchedPaths) -> Recap:
    paths = merge_paths(TouchedPaths(recap.read_paths, recap.modified_paths), touched)
    return attrs.evolve(recap, read_paths=paths.read, modified_paths=paths.modified)
