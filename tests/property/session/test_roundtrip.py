"""Message and ToolCall records survive record -> JSON -> record and record -> database
-> record unchanged, whatever their text: any unicode (lone surrogates included), empty
strings, big strings."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seri.io.session import conversations, session_table
from seri.io.session.codec import (
    message_from_dict,
    message_from_json,
    message_to_dict,
    message_to_json,
)
from seri.io.session.store import Store, open_store
from seri.pure.compaction.tokens import message_chars
from seri.pure.session.records import Message, ToolCall
from tests.store_writes import append_latest

# Any code point, with the awkward ones drawn often: lone surrogates (a model's JSON
# can carry "\ud83d" alone), NUL, line separators, a BOM, quotes and backslashes.
AWKWARD = st.sampled_from(
    [
        *("\ud800", "\udfff", "\ud83d", "\ude00"),
        *("\x00", "\n", "\r\n", '"', "\\", "\u2028", "\ufeff"),
        *("日本", "😀", "é", "\U0010ffff"),
    ]
)
ANY_TEXT = st.lists(st.one_of(st.characters(), AWKWARD), max_size=30).map("".join)
TEXT = st.one_of(
    st.just(""),
    ANY_TEXT,
    st.text(max_size=20).map(lambda t: t * 2000),  # big strings, cheaply
)
JSON_ARGS = st.one_of(
    st.just("{}"),
    st.dictionaries(st.text(max_size=8), st.text(max_size=20), max_size=4).map(
        lambda d: json.dumps(d, ensure_ascii=False)
    ),
    TEXT,  # raw arguments are stored as given, even when they are not JSON
)
TOOL_CALLS = st.builds(ToolCall, id=TEXT, name=TEXT, arguments=JSON_ARGS)
MESSAGES = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    text=TEXT,
    reasoning=TEXT,
    reasoning_details=TEXT,
    tool_calls=st.lists(TOOL_CALLS, max_size=3).map(tuple),
    tool_call_id=TEXT,
    tool_name=TEXT,
    is_error=st.booleans(),
    kind=st.sampled_from(["", "recap", "rule", "synthetic"]),
)


def _joined(text: str) -> str:
    """The text with each surrogate pair written as two code points joined into the one
    character it encodes; lone surrogates stay. JSON cannot tell the two apart (any
    decoder joins ``"\\ud83d\\ude00"``), so this is what a round trip can promise."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def _normal(message: Message) -> Message:
    calls = tuple(
        ToolCall(_joined(c.id), _joined(c.name), _joined(c.arguments)) for c in message.tool_calls
    )
    return attrs.evolve(
        message,
        text=_joined(message.text),
        reasoning=_joined(message.reasoning),
        reasoning_details=_joined(message.reasoning_details),
        tool_calls=calls,
        tool_call_id=_joined(message.tool_call_id),
        tool_name=_joined(message.tool_name),
    )


@given(MESSAGES)
def test_message_json_round_trip(message: Message) -> None:
    text = message_to_json(message)
    text.encode("utf-8")  # always storable as UTF-8 text
    assert message_from_json(text) == _normal(message)
    assert message_from_dict(message_to_dict(message)) == message
    assert message_from_dict(json.loads(text)) == _normal(message)


@given(st.builds(Message, role=st.just("user"), text=st.text()))
def test_text_utf8_can_hold_round_trips_exactly(message: Message) -> None:
    assert message_from_json(message_to_json(message)) == message


@given(MESSAGES)
def test_only_non_default_fields_are_stored(message: Message) -> None:
    """The body column stays small: a plain user message is {"role":"user","text":"hi"}."""
    stored = json.loads(message_to_json(message))
    defaults = Message(role=message.role)
    for field in ("text", "reasoning", "reasoning_details", "tool_call_id", "tool_name"):
        assert (field in stored) == (getattr(message, field) != getattr(defaults, field))
    assert ("tool_calls" in stored) == bool(message.tool_calls)
    assert ("is_error" in stored) == message.is_error
    assert ("kind" in stored) == bool(message.kind)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    root: Path = tmp_path_factory.mktemp("roundtrip") / "profile"
    opened = open_store(root)
    yield opened
    opened.close()


_ids = itertools.count()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(MESSAGES, min_size=1, max_size=6))
def test_messages_round_trip_through_the_database(store: Store, messages: list[Message]) -> None:
    session_id = f"s{next(_ids)}"
    session_table.create_session(
        store,
        session_id=session_id,
        project="/p",
        now=1.0,
        model="m",
        system_prompt="",
        prompt_hashes={},
    )
    last = append_latest(store, session_id, messages, 2.0)
    assert last == len(messages)
    expected = [_normal(m) for m in messages]
    assert list(conversations.load_messages(store, session_id)) == expected
    rows = list(conversations.iter_message_rows(store, session_id))
    assert [seq for seq, _, _ in rows] == list(range(1, len(messages) + 1))
    assert [m for _, _, m in rows] == expected
    state = session_table.load_state(store, session_id)
    assert state.session.messages == len(messages)
    assert state.total_chars == sum(message_chars(m) for m in messages)
    assert state.session.updated == 2.0


@given(MESSAGES)
def test_the_fast_encoder_writes_what_cattrs_writes(message: Message) -> None:
    """message_to_dict skips cattrs (start-up); its output is cattrs' omit-if-default form,
    key order included, so stored bodies do not change."""
    from seri.io.session.codec import _converter

    expected = _converter().unstructure(message)
    got = message_to_dict(message)
    assert list(got.items()) == list(expected.items())
