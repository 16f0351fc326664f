"""The prior a session never measured is priced at (seri/pure/provider/token_prior.py).

It must never undercount what the window check needs: a provider counting up to 3 tokens per
4 bytes of UTF-8 (the densest the compaction matrix drives, three times ``chars / 4`` on
English) and the chat template's framing is never sent a request over its window when the
check, at the prior, says that the request fits; and the fold's first summarizer request,
sized by its own text's prior, is never over the window by that provider's count either.
The provider's count is the loopback fake's own (``scripts.fake_model.count_prompt_tokens``).
"""

from __future__ import annotations

import math
from typing import Any

import attrs
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scripts.fake_model import Utf8Ratio, count_prompt_tokens
from seri.pure.compaction.summarizer_fold import SummaryFold
from seri.pure.compaction.tokens import sized_tokens, utf8_size
from seri.pure.compaction.window import MIN_HISTORY_LOCAL, Window
from seri.pure.provider.token_prior import (
    LEAST_DENSITY,
    MOST_DENSITY,
    class_bytes,
    message_prior,
    prior_density,
    prior_scale,
    text_prior,
)
from seri.pure.session.records import Message
from tests.property.strategies import (
    histories_with_payloads,
    mixed_class_histories,
    mixed_texts,
)

DENSEST = Utf8Ratio(3)


def wire(history: list[Message], system: str) -> dict[str, Any]:
    """A chat request of ``history`` after a system prompt, as the fake reads one."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in history:
        entry: dict[str, Any] = {"role": m.role, "content": m.text, "reasoning": m.reasoning}
        if m.tool_calls:
            entry["tool_calls"] = [
                {"function": {"name": "", "arguments": c.arguments}} for c in m.tool_calls
            ]
        messages.append(entry)
    return {"messages": messages}


@given(mixed_texts)
def test_the_classes_partition_the_bytes_and_price_each_at_least_three_quarters(
    text: str,
) -> None:
    prose, code, wide = class_bytes(text)
    assert prose + code + wide == utf8_size(text)
    assert 0.75 * utf8_size(text) <= text_prior(text) <= utf8_size(text)
    assert text_prior(text) == 0.75 * (prose + wide) + code
    if text:
        assert LEAST_DENSITY <= prior_density([text]) <= MOST_DENSITY


def test_each_class_is_priced_as_its_densest_tokenizer_counts_it() -> None:
    assert text_prior("hello world") == 0.75 * 11  # prose: 3 tokens per 4 bytes
    assert text_prior('{"":[1,2]}') == 10  # JSON: a token a byte
    assert text_prior("日本") == 2 * 2.25  # CJK: 2.25 tokens a character
    assert text_prior("мир") == 3 * 1.5  # Cyrillic: 1.5 tokens a character


@settings(suppress_health_check=[HealthCheck.too_slow])
# A system prompt and tools (9,321 characters, 7,002 tokens by the densest count) that leave
# no history room at the prior: priced sparser, the request "fits" and is sent, 2 tokens over.
@example(history=[Message(role="user", text="")], overhead_chars=9_321, tokens=8_000, keep=2_000)
@given(
    mixed_class_histories(),
    st.integers(0, 12_000),
    st.sampled_from([8_000, 16_000, 32_000, 128_000]),
    st.sampled_from([2_000, 20_000]),
)
def test_a_request_the_prior_says_fits_is_never_over_a_dense_providers_window(
    history: list[Message], overhead_chars: int, tokens: int, keep: int
) -> None:
    """The pre-send check at the prior (``Window.priced``) never lets through a request the
    densest provider would refuse: the prior counts at least its tokens, framing included."""
    window = Window.of(tokens, keep, overhead_chars=overhead_chars, max_tokens=None, scale=0.0)
    local = sized_tokens(history) + window.overhead_local
    prior = prior_scale(history, window.overhead_local)
    counted = count_prompt_tokens(wire(history, "s" * (4 * window.overhead_local)), DENSEST)
    # The prior's count of the request is the provider's count or more...
    assert math.ceil(prior * local) >= counted
    at_prior = attrs.evolve(window, scale=prior)
    if at_prior.request_fits(local):
        # ...so a request it lets through fits the window with its answer's room.
        assert counted + window.answer_tokens <= tokens
    priced = window.priced(local, prior)
    # Unless priced sparser to leave a history room beside a fixed part that fills it at the
    # prior (``Window.priced``'s cap: no request fits then, and the first reply measures the
    # real scale); the request that fits at that sparser price is sent at ``window``'s.
    capped = (tokens - window.answer_tokens) / (window.overhead_local + MIN_HISTORY_LOCAL) < prior
    if not capped and priced.request_fits(local):
        assert counted + window.answer_tokens <= tokens


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    mixed_class_histories() | histories_with_payloads(),
    st.sampled_from([8_000, 16_000, 64_000]),
    st.sampled_from([400, 4_096]),
)
def test_the_first_summarizer_request_is_priced_by_its_own_text_and_fits(
    history: list[Message], tokens: int, elide_bytes: int
) -> None:
    """Never measured, the fold sizes its first request by the prior of its own text: never
    denser than it was sized for, and within the window by the densest provider's count."""
    window = Window.of(tokens, 2_000, overhead_chars=4_000, max_tokens=None, scale=0.0)
    fold = SummaryFold(history, None, window, elide_bytes, "", "")
    chunk = fold.chunk(len(history))
    texts = [m.text for m in chunk.request]
    assert prior_density(texts) <= fold.density
    assert sum(text_prior(t) for t in texts) <= fold.density * chunk.local_tokens
    if chunk.local_tokens <= window.summary_room(fold.density):
        counted = count_prompt_tokens(
            {"messages": [{"role": m.role, "content": m.text} for m in chunk.request]}, DENSEST
        )
        assert counted + window.answer_tokens <= tokens


@given(mixed_class_histories())
def test_a_message_is_priced_as_what_its_size_counts(history: list[Message]) -> None:
    """``message_prior`` prices exactly the texts ``message_chars`` counts."""
    for m in history:
        texts = [m.text, m.reasoning, *(c.arguments for c in m.tool_calls)]
        assert message_prior(m) == sum(text_prior(t) for t in texts)
