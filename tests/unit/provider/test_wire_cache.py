"""The model caller's wire cache: every message's bytes are the same from one request to the
next but for its prompt-cache marker, whatever the history, wherever the markers move, and
however often the history is compacted in one process (the pruning once looked up a message
it had never cached: KeyError after the fourth compaction on the models that get markers)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.provider.prompt_cache import breakpoints, needs_cache_markers
from seri.pure.session.records import Message, ToolCall
from seri.runtime.provider.model_caller import WireCache

MARKER = ',"cache_control":{"type":"ephemeral"}'

texts = st.sampled_from(["", "x", "some words", 'a "quoted" ,"cache_control": line', "é ☃ 𝄞"])
calls = st.builds(
    ToolCall, id=st.sampled_from(["c1", "c2"]), name=st.just("read_file"), arguments=st.just("{}")
)
messages = st.one_of(
    st.builds(Message, role=st.sampled_from(["user", "system"]), text=texts),
    st.builds(Message, role=st.just("tool"), text=texts, tool_call_id=st.just("c1")),
    st.builds(
        Message,
        role=st.just("assistant"),
        text=texts,
        reasoning=texts,
        tool_calls=st.lists(calls, max_size=2).map(tuple),
    ),
)
# One step of a run: append messages, compact (a new recap replaces a prefix), or call the
# model with some messages marked.
steps = st.one_of(
    st.tuples(st.just("append"), st.lists(messages, min_size=1, max_size=4)),
    st.tuples(st.just("compact"), st.integers(0, 40)),
    st.tuples(st.just("call"), st.sets(st.integers(0, 60), max_size=4)),
)


def _unmarked(encoded: str) -> str:
    return encoded.replace(MARKER, "")


@settings(max_examples=150)
@given(st.booleans(), st.lists(messages, max_size=12), st.lists(steps, max_size=40))
def test_a_message_changes_only_by_its_marker_from_call_to_call(
    text_parts: bool, start: list[Message], run: list[tuple[str, object]]
) -> None:
    cache = WireCache(text_parts=text_parts)
    history = list(start)
    sent: dict[int, tuple[Message, str]] = {}  # id -> the message and its last bytes, unmarked
    for kind, value in run:
        if kind == "append":
            assert isinstance(value, list)
            history.extend(value)
        elif kind == "compact":
            assert isinstance(value, int)
            history = [Message(role="user", text="recap", kind="recap"), *history[value:]]
        else:
            assert isinstance(value, set)
            marked = frozenset(
                i
                for i in value
                if i < len(history) and history[i].text and history[i].role != "assistant"
            )
            marked = marked if text_parts else frozenset()
            encoded = cache.encoded(history, marked)
            joined = json.loads("[" + cache.join(history, marked) + "]")
            assert joined == [json.loads(text) for text in encoded]
            sendable = [
                (index, message)
                for index, message in enumerate(history)
                if message.role != "assistant" or message.text or message.tool_calls
            ]
            assert len(encoded) == len(sendable)
            for (index, message), text in zip(sendable, encoded, strict=True):
                assert text.count(MARKER) == (1 if index in marked else 0)
                previous = sent.get(id(message))
                if previous is not None and previous[0] is message:
                    assert _unmarked(text) == previous[1], "only the marker may change"
                sent[id(message)] = (message, _unmarked(text))


@settings(max_examples=60)
@given(
    st.sampled_from(["anthropic/claude-sonnet-4.5", "google/gemini-2.5-pro", "openai/gpt-4o"]),
    st.lists(messages, min_size=1, max_size=30),
)
def test_the_real_breakpoints_over_a_growing_history(model: str, history: list[Message]) -> None:
    """Each call sends one more message; the system prompt and the moving end are marked."""
    cache = WireCache(text_parts=needs_cache_markers(model))
    system = Message(role="system", text="frozen prompt")
    before: list[str] = []
    for size in range(len(history) + 1):
        messages = [system, *history[:size]]
        now = [_unmarked(text) for text in cache.encoded(messages, breakpoints(model, messages))]
        assert now[: len(before)] == before
        before = now


def test_many_compactions_with_a_moving_marker_in_one_cache() -> None:
    """The crash itself: a marker on the newest message, compaction after compaction."""
    model = "anthropic/claude-sonnet-4.5"
    cache = WireCache(text_parts=True)
    system = Message(role="system", text="frozen prompt")
    history: list[Message] = []
    for task in range(200):
        history.append(Message(role="user", text=f"task {task}"))
        history.append(
            Message(role="assistant", tool_calls=(ToolCall(f"c{task}", "read_file", "{}"),))
        )
        history.append(Message(role="tool", text="contents " * 50, tool_call_id=f"c{task}"))
        messages = [system, *history]
        assert cache.join(messages, breakpoints(model, messages))
        if len(history) > 30:
            history = [Message(role="user", text=f"recap {task}", kind="recap"), *history[-6:]]
