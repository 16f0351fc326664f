"""Invariants of the prompt-cache breakpoints and of lowering the output budget."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.provider.output_budget import MIN_OUTPUT_TOKENS, OUTPUT_MARGIN, lowered_output_budget
from seri.pure.provider.prompt_cache import MAX_BREAKPOINTS, breakpoints, needs_cache_markers
from seri.pure.provider.provider_failure import OverflowNumbers, ProviderFailure
from seri.pure.session.records import Message
from tests.property.strategies import plain_messages

roles = st.sampled_from(["user", "assistant", "tool"])
texts = st.sampled_from(["", "x", "some words"])
conversations = plain_messages(texts, max_size=30)
models = st.sampled_from(
    [
        "anthropic/claude-sonnet-4.5",
        "google/gemini-2.5-pro",
        "openai/gpt-4o",
        "fake/model",
        "deepseek/deepseek-chat",
        "claude-3-haiku",
    ]
)


@given(models, st.booleans(), conversations)
def test_breakpoints_are_few_and_on_cacheable_messages(
    model: str, with_system: bool, history: list[Message]
) -> None:
    messages = ([Message(role="system", text="prompt")] if with_system else []) + history
    marks = breakpoints(model, messages)
    assert len(marks) <= MAX_BREAKPOINTS
    if not needs_cache_markers(model):
        assert marks == frozenset()
        return
    for index in marks:
        message = messages[index]
        assert message.text
        assert message.role == "system" if index == 0 else message.role in ("user", "tool")
    assert (0 in marks) == (with_system and bool(messages))
    last = len(messages) - 1
    assert (last in marks and last > 0) == (
        last > 0 and messages[last].role in ("user", "tool") and bool(messages[last].text)
    )


@given(models, conversations, st.builds(Message, role=roles, text=texts))
def test_only_the_end_moves(model: str, history: list[Message], newest: Message) -> None:
    """Adding a message changes which messages are marked only at the old and the new end."""
    before = [Message(role="system", text="p"), *history]
    after = [*before, newest]
    old, new = breakpoints(model, before), breakpoints(model, after)
    moved = old ^ new
    assert moved <= {len(before) - 1, len(after) - 1}


@given(
    st.integers(1, 400_000),
    st.integers(1, 400_000),
    st.integers(1, 400_000),
    st.one_of(st.none(), st.integers(1, 500_000)),
)
def test_a_lowered_budget_fits_and_is_lower(
    limit: int, input_tokens: int, output_tokens: int, current: int | None
) -> None:
    numbers = OverflowNumbers(limit=limit, input_tokens=input_tokens, output_tokens=output_tokens)
    failure = ProviderFailure(kind="context_overflow", message="too long", overflow=numbers)
    sampling = {} if current is None else {"max_tokens": current}
    lowered = lowered_output_budget(failure, sampling)
    if lowered is None:
        return
    key, room, _ = lowered
    assert key == "max_tokens"
    assert input_tokens < limit, "lowered although the input itself does not fit"
    assert room >= MIN_OUTPUT_TOKENS
    assert input_tokens + room + OUTPUT_MARGIN == limit
    assert current is None or room < current


@given(st.integers(0, 100_000), st.one_of(st.none(), st.integers(1, 200_000)))
def test_a_402_budget_is_what_is_affordable(affordable: int, current: int | None) -> None:
    failure = ProviderFailure(kind="credits", message="402", affordable_tokens=affordable)
    sampling = {} if current is None else {"max_completion_tokens": current}
    lowered = lowered_output_budget(failure, sampling)
    if lowered is None:
        assert affordable - OUTPUT_MARGIN < MIN_OUTPUT_TOKENS or (
            current is not None and affordable - OUTPUT_MARGIN >= current
        )
        return
    key, room, _ = lowered
    assert key == ("max_tokens" if current is None else "max_completion_tokens")
    assert room == affordable - OUTPUT_MARGIN


@given(st.builds(Message, role=st.sampled_from(["system", "user", "tool"]), text=st.text()))
def test_a_marker_is_the_only_difference_a_breakpoint_makes(message: Message) -> None:
    """With text parts (the models that get markers), a message marked and unmarked are the
    same bytes but for the marker: moving the breakpoint never changes a cached prefix."""
    from seri.pure.provider.wire import to_wire_message

    def encoded(marker: bool) -> str:
        wire = to_wire_message(message, cache_marker=marker, text_parts=True)
        return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))

    plain, marked = encoded(False), encoded(True)
    if not message.text:
        assert plain == marked  # nothing to mark: breakpoints never picks an empty text
        return
    assert marked.replace(',"cache_control":{"type":"ephemeral"}', "", 1) == plain
    assert json.loads(plain)["content"] == [{"type": "text", "text": message.text}]
