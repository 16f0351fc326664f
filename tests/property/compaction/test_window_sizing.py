"""Sizing invariants of issue 31: what a compaction may leave, and what a request may carry.

* Wherever the system prompt and the tools leave room under half the window, the history a
  compaction may leave (each message with its framing) is under half the window with them,
  by the provider's count as learned.
* The keep budget a compaction cuts by is never more than what it may leave.
* A request the pre-send check passes fits the window with its answer's room.
* The sized measure never counts less than the spec's estimate (framing only adds).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.compaction.compaction_sizes import keep_local, recap_chars
from seri.pure.compaction.tokens import (
    FRAMING_TOKENS,
    estimate_tokens,
    messages_chars,
    sized_tokens,
)
from seri.pure.compaction.window import MIN_HISTORY_LOCAL, Window
from seri.pure.session.records import Message

windows = st.builds(
    Window.of,
    st.integers(1_000, 2_000_000),
    st.integers(1, 200_000),
    overhead_chars=st.integers(0, 200_000),
    max_tokens=st.none() | st.integers(1, 500_000),
    scale=st.just(0.0) | st.floats(1.0, 16.0),
)


@given(windows)
def test_the_target_is_under_half_the_window_wherever_the_fixed_part_leaves_room(
    window: Window,
) -> None:
    target = window.history_target_local
    assert target >= 1
    assert target <= max(1, window.request_room_local)
    if window.half_leaves_room and window.request_room_local >= MIN_HISTORY_LOCAL:
        assert window.provider(target + window.overhead_local) <= window.tokens // 2 + 1


@given(windows)
def test_a_compaction_cuts_by_at_most_what_it_may_leave(window: Window) -> None:
    assert 1 <= keep_local(window) <= max(1, window.history_target_local)
    assert keep_local(window) <= window.keep_local
    # The recap's rendering budget follows the cut's keep budget.
    assert recap_chars(window) >= 1_200


@given(windows, st.integers(0, 5_000_000))
def test_a_request_that_passes_the_check_fits_the_window(window: Window, local: int) -> None:
    if window.request_fits(local):
        assert window.provider(local) + window.answer_tokens <= window.tokens
    # Anything within the request room passes.
    if 0 <= local - window.overhead_local <= window.request_room_local and local >= 0:
        assert window.request_fits(min(local, window.request_room_local + window.overhead_local))


messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant", "tool"]),
        text=st.text(max_size=300),
    ),
    max_size=30,
)


@given(messages)
def test_sized_tokens_add_framing_to_the_spec_estimate(history: list[Message]) -> None:
    spec = estimate_tokens(messages_chars(history))
    assert sized_tokens(history) == spec + FRAMING_TOKENS * len(history)
    assert sized_tokens(history) >= spec
