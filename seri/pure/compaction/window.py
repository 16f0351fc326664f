"""How a context window is shared out, in the provider's tokens.

The trigger's estimate stays the spec's: the larger of the last billed input tokens and
``ceil(characters / 4)``. Everything compaction *sizes* (the kept tail, a tool result entering
the history, each summarizer request, the history a compaction must leave behind) is stated in
the provider's own tokens and converted to local units, ``ceil(characters / 4)``, with the
*scale*: how many provider tokens one local token turned out to be. Tokenizers denser than four
characters a token (digits, JSON, CJK, many code tokenizers) have scales of 2 to 4; without the
scale "keep 20,000 tokens" would keep three times as much as the provider can take.

The scale is learned from what the provider reports about a request whose local size seri
knows: billed ``prompt_tokens``, or the prompt tokens an overflow message states. It is never
taken below 1, so a budget in local units is never larger than the same budget counted as the
trigger counts it (``max`` of billed and local): sizing by the scale can only make compaction
earlier, never make it thrash. Until a first measurement, a history that would not fit at the
sparsest scale is priced by its own text (``seri.pure.provider.token_prior``: the most a tokenizer
is assumed to count for its prose, code and JSON, and wide characters), and the summarizer's
first request is sized the same way; its usage then measures the real scale.

Summarizer requests are sized by their own text in UTF-8 bytes / 4 and a *density*: provider
tokens per such unit. A density does not depend on the language of the text (a tokenizer
counts Chinese about three times, Russian about twice as dense as chars / 4 says, and their
bytes say so too), so a chunk of Japanese after a chunk of English is sized right. The density
a fold sizes by is a step of ``DENSITY_STEPS``, the smallest at least what the provider showed:
the dry run states the plan for each step, and the real compaction follows the one its first
reply shows.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import attrs

from seri.pure.compaction.cuts import keep_budget
from seri.pure.compaction.tokens import estimate_tokens

if TYPE_CHECKING:
    from seri.pure.provider.provider_failure import OverflowNumbers

# A tool result entering the history takes at most this share of the window...
RESULT_WINDOW_SHARE = 8
# ... and never more than the tools' own byte caps (read_file's 50 KB, bash's 25 KB head and
# 25 KB tail), nor so little that a result says nothing.
RESULT_BYTE_CAP = 50_000
MIN_RESULT_CHARS = 1_000

# The room left for an answer: the configured max_tokens, else this much, at most an eighth of
# the window.
DEFAULT_ANSWER_TOKENS = 4_096
ANSWER_WINDOW_SHARE = 8

MAX_SCALE = 16.0
UNMEASURED_SCALE = 4.0
# The densities (provider tokens per UTF-8 bytes / 4) summarizer requests are sized by.
DENSITY_STEPS = (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 8.0, 12.0, MAX_SCALE)
# The least history worth keeping under half the window: a recap's bare bones and a message.
MIN_HISTORY_LOCAL = 500
# Requests are filled to this share of their room: the provider's chat template adds tokens per
# message that no character count sees.
FILL = 0.9


def clamp_scale(scale: float) -> float:
    """A scale seri can size by: at least 1, at most ``MAX_SCALE``; nonsense becomes 1."""
    if not math.isfinite(scale) or scale < 1.0:
        return 1.0
    return min(scale, MAX_SCALE)


def density_step(density: float) -> float:
    """The step of ``DENSITY_STEPS`` a fold sizes by for a provider that showed ``density``:
    the smallest at least it (nonsense is 1, more than the last step is the last)."""
    wanted = clamp_scale(density)
    return next((step for step in DENSITY_STEPS if step >= wanted), MAX_SCALE)


def refused_density(density: float, stated_tokens: int, local_tokens: int) -> float:
    """The density a fold sizes by after the provider refused a request of ``local_tokens``
    sized for ``density``: the step of what its stated prompt tokens show, or twice ``density``
    when they show no more (or were not stated), so that the next request is smaller."""
    shown = stated_tokens / local_tokens if stated_tokens > 0 and local_tokens > 0 else 0.0
    return density_step(shown if shown > density else 2 * density)


def measured_scale(provider_tokens: int, local_tokens: int) -> float | None:
    """The scale a provider's count of a request of ``local_tokens`` shows, or None."""
    if provider_tokens <= 0 or local_tokens <= 0:
        return None
    return clamp_scale(provider_tokens / local_tokens)


@attrs.frozen
class Window:
    """One model's window as seri shares it out.

    ``tokens`` is the context window and ``keep_tokens`` the keep budget (already at most a
    quarter of it), both in provider tokens. ``overhead_chars`` is what every turn request
    carries besides the history: the frozen system prompt and the tool definitions.
    ``answer_tokens`` is kept free for the model's answer. ``scale`` is provider tokens per
    local token; ``measured`` says whether a provider ever reported a count to learn it from.
    """

    tokens: int
    keep_tokens: int
    overhead_chars: int = 0
    answer_tokens: int = 0
    scale: float = 1.0
    measured: bool = False

    @classmethod
    def of(
        cls,
        tokens: int,
        keep_tokens: int,
        *,
        overhead_chars: int = 0,
        max_tokens: int | None = None,
        scale: float = 0.0,
    ) -> Window:
        """A window; ``scale`` 0 means not measured yet, ``max_tokens`` the configured one."""
        if tokens <= 0:
            raise ValueError(f"a context window must be positive: {tokens}")
        answer = min(DEFAULT_ANSWER_TOKENS, tokens // ANSWER_WINDOW_SHARE)
        if max_tokens:
            answer = max(answer, min(max_tokens, tokens // 2))
        return cls(
            tokens=tokens,
            keep_tokens=keep_budget(keep_tokens, tokens),
            overhead_chars=overhead_chars,
            answer_tokens=answer,
            scale=clamp_scale(scale) if scale > 0 else 1.0,
            measured=scale > 0,
        )

    # -- learning ------------------------------------------------------------------------------

    def learned(self, provider_tokens: int, local_tokens: int) -> Window:
        """This window with the scale a provider's count of a ``local_tokens`` request shows."""
        scale = measured_scale(provider_tokens, local_tokens)
        if scale is None:
            return self
        return attrs.evolve(self, scale=scale, measured=True)

    def refused(
        self, numbers: OverflowNumbers | None, local_tokens: int, *, sized_for: float
    ) -> Window:
        """This window after the provider refused a request of ``local_tokens`` as too long.

        ``numbers`` are the counts its message stated. A stated limit below the window is the
        window from now on; stated prompt tokens give the scale. A refusal they do not explain
        (or no numbers at all) halves what the next request may hold: the scale doubles from
        ``sized_for``, the scale the refused request was sized with.
        """
        window = self
        limit = numbers.limit if numbers is not None else None
        if limit is not None and 0 < limit < window.tokens:
            window = attrs.evolve(
                window,
                tokens=limit,
                keep_tokens=keep_budget(window.keep_tokens, limit),
                answer_tokens=min(window.answer_tokens, max(limit // 2, 1)),
            )
        stated = stated_prompt_tokens(numbers)
        measured = measured_scale(stated, local_tokens) if stated else None
        scale = measured if measured is not None else sized_for
        if math.ceil(local_tokens * scale) <= window.tokens - window.answer_tokens:
            # The numbers do not explain the refusal: assume twice as dense.
            scale = max(scale, 2 * sized_for)
        return attrs.evolve(window, scale=clamp_scale(scale), measured=True)

    # -- conversions ---------------------------------------------------------------------------

    def local(self, provider_tokens: int) -> int:
        """Provider tokens in local units (rounded down: a budget never grows by rounding)."""
        return max(0, math.floor(provider_tokens / self.scale))

    def provider(self, local_tokens: int) -> int:
        """Local units in provider tokens, as far as the scale knows (rounded up)."""
        return math.ceil(local_tokens * self.scale)

    @property
    def typical_answer_tokens(self) -> int:
        """The room an answer gets without a configured max_tokens: also what an answer
        already in the history is reckoned at."""
        return min(self.answer_tokens, DEFAULT_ANSWER_TOKENS, self.tokens // ANSWER_WINDOW_SHARE)

    @property
    def overhead_local(self) -> int:
        return estimate_tokens(self.overhead_chars)

    # -- budgets, in local units ---------------------------------------------------------------

    @property
    def keep_local(self) -> int:
        """The keep budget: about ``keep_tokens`` of the provider's tokens."""
        return max(1, self.local(self.keep_tokens))

    @property
    def half_local(self) -> int:
        return self.local(self.tokens // 2)

    @property
    def request_room_local(self) -> int:
        """What a turn request can hold for the history, the answer's room kept free."""
        return self.local(self.tokens - self.answer_tokens) - self.overhead_local

    @property
    def fixed_part_fills_window(self) -> bool:
        """True when the system prompt and the tools, with the answer's room, leave nothing of
        the window for a history even at the sparsest scale (1): then no compaction can help,
        whatever a refusal made seri guess about the tokenizer."""
        return self.tokens - self.answer_tokens - self.overhead_local <= 0

    @property
    def under_half_local(self) -> int:
        """What half the window leaves for the history beside the system prompt and tools."""
        return self.half_local - self.overhead_local

    @property
    def half_leaves_room(self) -> bool:
        """Whether a history (a recap and a little of the tail) fits under half the window
        beside the system prompt and the tools."""
        return self.under_half_local >= MIN_HISTORY_LOCAL

    @property
    def history_target_local(self) -> int:
        """The most history (recap and messages, each with its framing: see
        ``seri.pure.compaction.tokens.sized_tokens``) a compaction may leave behind.

        Under half the window with the system prompt and tools counted, wherever they leave
        room for a history there. Where they alone take (nearly) half of a small window, the
        keep budget instead (the caller says so once); never more than a request can carry.
        """
        wanted = self.under_half_local if self.half_leaves_room else self.keep_local
        return max(1, min(wanted, self.request_room_local))

    def priced(self, local_tokens: int, prior: float = UNMEASURED_SCALE) -> Window:
        """The window to size a request of ``local_tokens`` by: this one once measured; until
        then, when the request would not fit at the sparsest scale, this one at the ``prior``
        scale the request's own text gives (``seri.pure.provider.token_prior.prior_scale``; still
        unmeasured), so that a resumed session never measured is not judged at scale 1 and
        refused at 2x or 3x, nor a Japanese one priced like English. The first reply's usage
        then measures the real scale."""
        dense = min(MAX_SCALE, max(1.0, prior))
        if self.measured or self.scale >= dense:
            return self
        # No denser than leaves a history room beside the system prompt and the tools: a
        # price at which nothing fits would only make every request "too long".
        sparse_enough = (self.tokens - self.answer_tokens) / (
            self.overhead_local + MIN_HISTORY_LOCAL
        )
        scale = max(self.scale, min(dense, sparse_enough))
        priced = attrs.evolve(self, scale=scale)
        return self if priced.request_fits(local_tokens) else priced

    def request_fits(self, local_tokens: int) -> bool:
        """Whether a turn request of ``local_tokens`` (sized as ``sized_tokens`` counts, the
        system prompt and tools included) fits the window with its answer's room, by the
        provider's count as learned."""
        return self.provider(local_tokens) + self.answer_tokens <= self.tokens

    @property
    def result_cap_chars(self) -> int:
        """The most characters one tool result may bring into the history."""
        share = self.local(self.tokens // RESULT_WINDOW_SHARE) * 4
        return max(MIN_RESULT_CHARS, min(RESULT_BYTE_CAP, share))

    def summary_room(self, density: float) -> int:
        """What one summarizer request may hold, prompt included, in UTF-8 bytes / 4, for a
        provider that counts ``density`` tokens for each."""
        room = (self.tokens - self.answer_tokens) / clamp_scale(density)
        return max(1, math.floor(room * FILL))


def stated_prompt_tokens(numbers: OverflowNumbers | None) -> int | None:
    """The prompt tokens a provider's overflow message states, where it states them."""
    if numbers is None:
        return None
    if numbers.input_tokens:
        return numbers.input_tokens
    if numbers.requested and numbers.output_tokens is not None:
        return max(0, numbers.requested - numbers.output_tokens) or None
    return numbers.requested or None
