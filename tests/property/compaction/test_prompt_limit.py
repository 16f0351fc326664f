"""The largest prompt a session takes (review-1, N2): pure invariants of ``prompt_limit_local``.

Three prompts of the largest size, with an answer between them, fit one request: a history of
three messages and the new prompt (no cut can evict fewer than four) is always sendable.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.agent.prompt_limit import oversized_prompt, prompt_limit_local
from seri.pure.compaction.tokens import estimate_tokens
from seri.pure.compaction.window import Window

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
    answer = window.local(window.typical_answer_tokens)
    if window.request_room_local - answer >= 3:
        assert 3 * limit + answer <= window.request_room_local
    assert limit >= 1


@given(windows)
def test_a_configured_max_tokens_is_kept_free_once_not_twice(window: Window) -> None:
    """The next answer's room is out of the request's room; the answer already in the history
    is a typical one, whatever max_tokens says (review: 64000 of 128k left one token)."""
    assert window.typical_answer_tokens <= window.answer_tokens
    assert window.typical_answer_tokens <= 4_096
    unconfigured = Window.of(
        window.tokens,
        window.keep_tokens,
        overhead_chars=window.overhead_chars,
        scale=window.scale if window.measured else 0.0,
    )
    room_taken = window.local(window.answer_tokens) - window.local(unconfigured.answer_tokens)
    assert prompt_limit_local(unconfigured) - prompt_limit_local(window) <= room_taken // 3 + 1


def test_max_tokens_64000_in_a_128k_window_leaves_room_for_prompts() -> None:
    window = Window.of(128_000, 20_000, overhead_chars=12_000, max_tokens=64_000)
    assert window.provider(prompt_limit_local(window)) > 18_000
    refusal = oversized_prompt(window, 4 * 30_000)
    assert "sampling.max_tokens in config.json keeps 64,000" in refusal
    assert "sampling.max_completion_tokens" in oversized_prompt(
        window, 4 * 30_000, "max_completion_tokens"
    )
    # Too big even with the default answer room: max_tokens is not blamed.
    assert "max_tokens" not in oversized_prompt(window, 4 * 100_000)


@given(windows, st.integers(0, 10_000_000))
def test_a_prompt_is_refused_exactly_when_it_is_over_the_limit(window: Window, chars: int) -> None:
    refusal = oversized_prompt(window, chars)
    assert bool(refusal) == (estimate_tokens(chars) > prompt_limit_local(window))
    if refusal:
        assert f"{window.tokens:,}" in refusal and f"{chars:,} characters" in refusal
