"""The history estimate and the 50% trigger."""

from __future__ import annotations

import pytest

from seri.pure.compaction.tokens import (
    estimate_tokens,
    history_estimate,
    message_chars,
    messages_chars,
    should_compact,
)
from seri.pure.session.records import Message, ToolCall


def test_message_chars_counts_text_thinking_and_arguments() -> None:
    """Text, the larger form of the thinking, and raw tool arguments; not names or ids."""
    m = Message(
        role="assistant",
        text="abc",
        reasoning="12345",
        reasoning_details='[{"t":"12345"}]',
        tool_calls=(ToolCall("call_1", "read_file", '{"path":"a"}'),),
    )
    assert message_chars(m) == 3 + len('[{"t":"12345"}]') + len('{"path":"a"}')
    result = Message(role="tool", text="é" * 7, tool_call_id="call_1", tool_name="read_file")
    assert message_chars(result) == 7
    assert messages_chars([m, result]) == message_chars(m) + 7


@pytest.mark.parametrize(("chars", "tokens"), [(0, 0), (1, 1), (4, 1), (5, 2), (8, 2), (9, 3)])
def test_estimate_is_ceil_of_a_quarter(chars: int, tokens: int) -> None:
    """ceil(chars / 4)."""
    assert estimate_tokens(chars) == tokens


def test_estimate_takes_the_larger_count() -> None:
    """The billed count wins when larger, the local count otherwise."""
    assert history_estimate(1_000, 400) == 1_000
    assert history_estimate(10, 4_001) == 1_001


def test_trigger_at_half_the_window() -> None:
    """At least half the window compacts, even for an odd window."""
    assert should_compact(50, 100)
    assert not should_compact(49, 100)
    assert should_compact(51, 101)
    assert not should_compact(50, 101)
    with pytest.raises(ValueError, match="positive"):
        should_compact(1, 0)
