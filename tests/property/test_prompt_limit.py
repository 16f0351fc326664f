"""The largest prompt a session takes (review-1, N2): pure invariants of ``prompt_limit_local``.

Three prompts of the largest size, with an answer between them, fit one request: a history of
three messages and the new prompt (no cut can evict fewer than four) is always sendable.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.tokens import estimate_tokens
from seri.pure.turn import oversized_prompt, prompt_limit_local
from seri.pure.window import Window

windows = st.builds(
    Window.of,
    st.integers(1_000, 2_000_000),
    st.integers(1, 200_000),
    overhead_chars=st.integers(0, 200_000),
    max_tokens=st.none() | st.integers(1, 500_000),
    scale=st.just(0.0) | st.floats(0.5, 20.0),
)


@given(windows)
def test_three_of_the_largest_prompts_and_an_answer_fit_one_request(window: Window) -> None:
    limit = prompt_limit_local(window)
    if window.request_room_local - window.local(window.answer_tokens) >= 3:
        assert 3 * limit + window.local(window.answer_tokens) <= window.request_room_local
    assert limit >= 1


@given(windows, st.integers(0, 10_000_000))
def test_a_prompt_is_refused_exactly_when_it_is_over_the_limit(window: Window, chars: int) -> None:
    refusal = oversized_prompt(window, chars)
    assert bool(refusal) == (estimate_tokens(chars) > prompt_limit_local(window))
    if refusal:
        assert f"{window.tokens:,}" in refusal and f"{chars:,} characters" in refusal
