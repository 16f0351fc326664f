"""Lone surrogates never reach the wire (review-1, N4).

Anthropic refuses a body with a lone UTF-16 surrogate half, raw or as a ``\\udXXX`` escape,
with a permanent 400 ("no low surrogate in string", anthropics/claude-code#3277). The store
keeps them as they came; a request body replaces each lone half with U+FFFD.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.provider.wire import to_wire_messages, wire_text, wire_utf8
from seri.pure.session.records import Message, ToolCall

# Every code point, the surrogate halves included (hypothesis leaves them out by default).
any_text = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, categories=None))
halves = st.text(st.sampled_from(["a", "\ud83d", "\ude00", "\udfff", "é", "😀"]), max_size=12)
texts = any_text | halves
LONE = re.compile("[\ud800-\udfff]")


def strings_in(value: Any) -> list[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings_in(v))]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


@given(texts)
def test_wire_text_is_valid_unicode_and_changes_only_lone_halves(text: str) -> None:
    sent = wire_text(text)
    sent.encode("utf-8")  # never raises
    if not LONE.search(text):
        assert sent == text
    # A whole character survives; a lone half becomes U+FFFD.
    assert sent.replace("\ufffd", "") == "".join(
        c for c in text.encode("utf-16", "surrogatepass").decode("utf-16", "ignore")
    ).replace("\ufffd", "")


@given(texts, texts, texts)
def test_a_body_carries_no_lone_surrogate_raw_or_escaped(text: str, result: str, arg: str) -> None:
    escaped_arguments = json.dumps({"content": arg})  # \\udXXX escapes, as a model sends them
    messages = (
        Message(role="user", text=text),
        Message(
            role="assistant",
            text=text,
            tool_calls=(ToolCall(id="c1", name="write_file", arguments=escaped_arguments),),
        ),
        Message(role="tool", text=result, tool_call_id="c1", tool_name="write_file"),
    )
    body = json.dumps({"messages": to_wire_messages(messages)}, ensure_ascii=False)
    sent = json.loads(wire_utf8(body).decode("utf-8"))
    strings = strings_in(sent)
    arguments = sent["messages"][1]["tool_calls"][0]["function"]["arguments"]
    strings += strings_in(json.loads(arguments))
    assert not any(LONE.search(s) for s in strings)
    assert json.loads(arguments)["content"] == wire_text(arg)
