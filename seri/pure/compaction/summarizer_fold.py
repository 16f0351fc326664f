"""The summarizer's pass over the evicted part (``SummaryFold``): one request a step, oldest first,
each updating the recap the previous one made.

Every request is sized to fit the window (its chunk is made by ``seri.pure.compaction.fold``), by
the density of provider tokens the replies show; a refused request is shrunk by the numbers the
provider stated and retried once. Each request has its own answer budget (``summary_budget``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import attrs

from seri.pure.agent.effects import CallModel, Flow, ModelFailed, ModelReply, Record
from seri.pure.compaction.compaction_outcome import CHANGED, NotCompacted, Why
from seri.pure.compaction.compaction_sizes import recap_reserve
from seri.pure.compaction.fold import Chunk, next_chunk
from seri.pure.compaction.recap import Recap, merge_recap
from seri.pure.compaction.recap_answer import parse_recap_answer
from seri.pure.compaction.tokens import bytes_per_char
from seri.pure.compaction.window import (
    FILL,
    Window,
    density_step,
    refused_density,
    stated_prompt_tokens,
)
from seri.pure.provider.output_budget import OutputBudget, call_within_budget
from seri.pure.provider.token_prior import MOST_DENSITY, prior_density
from seri.pure.session.records import Message
from seri.pure.trajectories import events


class SummaryFold:
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
