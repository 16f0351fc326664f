"""`seri sessions show`'s human form: the same text as before it was made faster.

``indent`` finds a line ending in a blank with one search of the text's bytes instead of
four searches of the text, and the command neutralises a thousand messages at once instead
of each; both must change nothing a person sees. The reference below is the renderer as it
was (commit 7fc6dd1, seri/commands/sessions.py), kept verbatim.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.io.session.codec import message_to_dict
from seri.pure.session.records import Message, ToolCall
from seri.pure.session.shown_message import SHOWN_WIDTH, indent, render_message
from seri.pure.terminal.terminal_text import _TABLE, inert_utf8, neutralise


def _reference_render(seq: int, message: dict[str, Any]) -> str:
    get = message.get
    role = get("role", "?")
    kind = get("kind")
    head = f"[{seq}] {role} ({kind})" if kind else f"[{seq}] {role}"
    if role == "tool":
        head += f" {get('tool_name', '')} [{get('tool_call_id', '')}]"
    lines = [head]
    reasoning = get("reasoning")
    if reasoning:
        lines.append(_reference_indent("(thinking) " + reasoning))
    text = get("text")
    if text:
        lines.append(_reference_indent("(error) " + text if get("is_error") else text))
    calls = get("tool_calls")
    if calls:
        lines.extend(
            _reference_indent(f"-> {call.get('name')}({call.get('arguments')})  [{call.get('id')}]")
            for call in calls
        )
    lines.append("")
    return "\n".join(lines)


def _reference_indent(text: str, width: int = 2000) -> str:
    if "\n" not in text and len(text) <= width:
        return ("    " + text).rstrip()
    shown = text if len(text) <= width else text[:width] + f"… ({len(text) - width} more chars)"
    shown = shown.removesuffix("\n")
    if " \n" in shown or "\t\n" in shown or "\r\n" in shown or "\n\n" in shown:
        return "\n".join(("    " + line).rstrip() for line in shown.split("\n"))
    return ("    " + shown.replace("\n", "\n    ")).rstrip()


# Lines made of what decides the rendering: blanks and other whitespace at their ends (a
# form feed, a no-break space, U+3000 are stripped by rstrip too), empty lines, CR, tabs,
# escapes, lone surrogates, NUL, and any other character.
PIECES = st.sampled_from(
    [
        "\n",
        "\n\n",
        " ",
        "\t",
        "\r",
        "\r\n",
        " \n",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x85",
        "\xa0",
        "\u2028",
        "\u3000",
        "\x1b[2J",
        "\x00",
        "\ud800",
        "\u202e",
        "…",
        "x",
        "def f():",
    ]
)
TEXT = st.one_of(
    st.lists(st.one_of(PIECES, st.text(st.characters(codec=None), max_size=8)), max_size=30).map(
        "".join
    ),
    # Around the cut: just under, at and over SHOWN_WIDTH, ending in what is cut or kept.
    st.tuples(st.integers(SHOWN_WIDTH - 3, SHOWN_WIDTH + 3), PIECES, PIECES).map(
        lambda parts: "a" * parts[0] + parts[1] + parts[2]
    ),
)
CALLS = st.lists(st.builds(ToolCall, st.text(max_size=5), st.text(max_size=8), TEXT), max_size=3)
MESSAGES = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "tool", "system"]),
    text=TEXT,
    reasoning=st.one_of(st.just(""), TEXT),
    tool_calls=CALLS.map(tuple),
    tool_call_id=st.text(max_size=6),
    tool_name=st.text(max_size=6),
    is_error=st.booleans(),
    kind=st.sampled_from(["", "recap", "summary"]),
)


@settings(max_examples=400)
@given(TEXT)
def test_indent_is_what_it_was(text: str) -> None:
    assert indent(text) == _reference_indent(text)


@settings(max_examples=200)
@given(st.integers(1, 10**6), MESSAGES)
def test_a_stored_message_renders_as_it_did(seq: int, message: Message) -> None:
    body = message_to_dict(message)
    assert render_message(seq, body) == _reference_render(seq, body)


@settings(max_examples=200)
@given(st.lists(st.tuples(st.integers(1, 10**6), MESSAGES), max_size=6))
def test_a_chunk_neutralised_whole_is_the_messages_neutralised_each(
    messages: list[tuple[int, Message]],
) -> None:
    texts = [render_message(seq, message_to_dict(message)) for seq, message in messages]
    assert neutralise("".join(texts)) == "".join(neutralise(text) for text in texts)


def test_nothing_neutralise_changes_is_printable() -> None:
    """neutralise skips its search for printable text: every character it changes (the
    controls, C1, the bidirectional formatting, surrogates) is unprintable."""
    printable = "".join(ch for ch in map(chr, range(0x110000)) if ch.isprintable())
    assert printable.translate(_TABLE) == printable


# Text as the show command writes it: mostly plain, with cut marks, curly quotes, no-break
# spaces, and what must be neutralised (C0, DEL, C1, bidirectional controls, surrogates).
UTF8_PIECES = st.sampled_from(
    [
        *("x", "\n", "\t", "…", "’", "\xa0", "é", "\u3000", "\x1b", "\x7f", "\x85", "\x9b"),
        *("\u202a", "\u202e", "\u2066", "\u2069", "\u2028", "\ud800", "\udfff", "😀", "\x00"),
    ]
)


@settings(max_examples=400)
@given(
    st.one_of(
        st.lists(
            st.one_of(UTF8_PIECES, st.text(st.characters(codec=None), max_size=4)), max_size=80
        ),
        # Many lead bytes in little text: the regex decides.
        st.lists(st.sampled_from(["…", "’", "\x85", "a"]), min_size=60, max_size=200),
    ).map("".join)
)
def test_inert_utf8_is_the_text_in_utf8_exactly_when_neutralise_leaves_it(text: str) -> None:
    data = inert_utf8(text)
    if neutralise(text) == text:
        assert data == text.encode("utf-8")
    else:
        assert data is None
