"""Importing generated legacy files: a valid file comes back exactly; a torn last line
is dropped with a warning naming it; a corrupt line elsewhere rejects the file naming
that line; a broken tool structure is repaired. Whatever the input, what is imported
satisfies the pairing invariant."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seri.io.session import conversations, session_table
from seri.io.session.legacy_import import import_legacy
from seri.io.session.store import Store, open_store
from seri.pure.session.legacy import LOST_RESULT, RECAP_PREFIX, LegacyFileError, parse_legacy_file
from seri.pure.session.records import Message, MessageKind, ToolCall
from tests.legacy_support import SYSTEM, assert_paired, header, system_line, user_line

NAME = "gen.jsonl"
TEXT = st.text(max_size=30)
TOOL_NAMES = st.sampled_from(["bash", "read_file", "edit", "glob", "grep"])
ARGS = st.dictionaries(st.sampled_from(["path", "command", "old", "new"]), TEXT, max_size=3)
OUTPUTS = st.one_of(
    st.tuples(st.just("text"), TEXT),
    st.tuples(st.just("error-text"), TEXT),
    st.tuples(st.just("json"), st.dictionaries(TEXT, st.integers(), max_size=2)),
)


@attrs.frozen
class Turn:
    """One user message, then one assistant message with its calls and their results."""

    prompt: str
    reply: str
    reasoning: str
    calls: tuple[tuple[str, str, dict[str, Any]], ...]
    outputs: tuple[tuple[str, Any], ...]
    # How the results are written: one tool line for all, or one line each (in this order).
    split: bool
    order: tuple[int, ...]


@st.composite
def turns(draw: st.DrawFn, index: int) -> Turn:
    count = draw(st.integers(0, 3))
    calls = tuple((f"call_{index}_{k}", draw(TOOL_NAMES), draw(ARGS)) for k in range(count))
    outputs = tuple(draw(OUTPUTS) for _ in range(count))
    order = tuple(draw(st.permutations(range(count)))) if count else ()
    return Turn(draw(TEXT), draw(TEXT), draw(TEXT), calls, outputs, draw(st.booleans()), order)


@st.composite
def conversations_(draw: st.DrawFn) -> list[Turn]:
    size = draw(st.integers(1, 5))
    return [draw(turns(n)) for n in range(size)]


def _assistant(turn: Turn) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if turn.reasoning:
        parts.append({"type": "reasoning", "text": turn.reasoning})
    if turn.reply:
        parts.append({"type": "text", "text": turn.reply})
    parts += [
        {"type": "tool-call", "toolCallId": cid, "toolName": name, "input": args}
        for cid, name, args in turn.calls
    ]
    return {"role": "assistant", "content": parts}


def _result_part(call: tuple[str, str, dict[str, Any]], output: tuple[str, Any]) -> dict[str, Any]:
    kind, value = output
    return {
        "type": "tool-result",
        "toolCallId": call[0],
        "toolName": call[1],
        "output": {"type": kind, "value": value},
    }


def _lines(turn: Turn) -> list[dict[str, Any]]:
    lines = [user_line(turn.prompt), _assistant(turn)]
    parts = [_result_part(turn.calls[i], turn.outputs[i]) for i in turn.order]
    if parts and turn.split:
        lines += [{"role": "tool", "content": [part]} for part in parts]
    elif parts:
        lines.append({"role": "tool", "content": parts})
    return lines


def _expected(turn: Turn) -> list[Message]:
    calls = tuple(
        ToolCall(cid, name, json.dumps(args, ensure_ascii=False)) for cid, name, args in turn.calls
    )
    # The older release stored its compaction recaps as user messages with this prefix.
    prompt_kind: MessageKind = "recap" if turn.prompt.startswith(RECAP_PREFIX) else ""
    messages = [
        Message(role="user", text=turn.prompt, kind=prompt_kind),
        Message(role="assistant", text=turn.reply, reasoning=turn.reasoning, tool_calls=calls),
    ]
    for i in turn.order:
        kind, value = turn.outputs[i]
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        messages.append(
            Message(
                role="tool",
                text=text,
                tool_call_id=calls[i].id,
                tool_name=calls[i].name,
                is_error=kind == "error-text",
            )
        )
    return messages


@attrs.frozen
class Layout:
    """How the lines are laid out in bytes: none of these may change the outcome."""

    crlf: bool
    bom: bool
    ascii: bool
    blank_after: frozenset[int]


LAYOUTS = st.builds(
    Layout,
    crlf=st.booleans(),
    bom=st.booleans(),
    ascii=st.booleans(),
    blank_after=st.frozensets(st.integers(0, 40), max_size=4),
)


def _render(values: list[Any], layout: Layout) -> tuple[bytes, list[int]]:
    """The file's bytes and the (1-based) line number each value landed on."""
    end = b"\r\n" if layout.crlf else b"\n"
    out = [b"\xef\xbb\xbf"] if layout.bom else []
    numbers = []
    line = 0
    for index, value in enumerate(values):
        line += 1
        numbers.append(line)
        out.append(json.dumps(value, ensure_ascii=layout.ascii).encode("utf-8") + end)
        if index in layout.blank_after:
            line += 1
            out.append(b"   " + end)
    return b"".join(out), numbers


def _file(conversation: list[Turn]) -> tuple[list[Any], list[Message]]:
    values: list[Any] = [header("gen-1"), system_line(SYSTEM)]
    expected: list[Message] = []
    for turn in conversation:
        values += _lines(turn)
        expected += _expected(turn)
    return values, expected


@settings(max_examples=150)
@given(conversations_(), LAYOUTS)
def test_a_valid_file_comes_back_exactly(conversation: list[Turn], layout: Layout) -> None:
    values, expected = _file(conversation)
    data, _numbers = _render(values, layout)
    parsed = parse_legacy_file(NAME, data)
    assert parsed.warnings == ()
    assert list(parsed.messages) == expected
    assert parsed.header.id == "gen-1"
    assert parsed.header.system_prompt == SYSTEM
    assert_paired(parsed.messages)


@settings(max_examples=150)
@given(conversations_(), LAYOUTS, st.data())
def test_a_torn_last_line_is_dropped_with_a_warning_naming_it(
    conversation: list[Turn], layout: Layout, data: st.DataObject
) -> None:
    values, expected = _file(conversation)
    text, numbers = _render(values, layout)
    last = json.dumps(_lines(conversation[0])[0], ensure_ascii=layout.ascii).encode()
    cut = data.draw(st.integers(1, len(last) - 1), label="cut")
    torn_number = (numbers[-1] + (1 if len(values) - 1 in layout.blank_after else 0)) + 1
    parsed = parse_legacy_file(NAME, text + last[:cut])
    assert len(parsed.warnings) == 1
    assert parsed.warnings[0].startswith(f"{NAME}:{torn_number}: torn last line dropped")
    assert list(parsed.messages) == expected
    assert_paired(parsed.messages)


@settings(max_examples=150)
@given(conversations_(), LAYOUTS, st.data())
def test_a_corrupt_line_before_the_last_rejects_the_file_naming_that_line(
    conversation: list[Turn], layout: Layout, data: st.DataObject
) -> None:
    values, _expected_messages = _file(conversation)
    index = data.draw(st.integers(0, len(values) - 2), label="corrupt line")
    garbage = data.draw(
        st.sampled_from([b"{", b'{"role": "user"', b"not json", b"\xff\xfe", b'{"a":1}}', b"[1,]"]),
        label="garbage",
    )
    text, numbers = _render(values, layout)
    lines = text.split(b"\n")
    # Line numbers are 1-based; a BOM sits on the first line.
    position = numbers[index] - 1
    prefix = b"\xef\xbb\xbf" if position == 0 and layout.bom else b""
    lines[position] = prefix + garbage + (b"\r" if layout.crlf else b"")
    with pytest.raises(LegacyFileError, match=rf"^{NAME}:{numbers[index]}: "):
        parse_legacy_file(NAME, b"\n".join(lines))


@st.composite
def broken_files(draw: st.DrawFn) -> tuple[bytes, list[Message]]:
    """A valid file whose tool structure is then mangled: results dropped, repeated,
    moved after the next user message, or answering calls nobody made; a call id
    used twice in one message."""
    conversation = draw(conversations_())
    values: list[Any] = [header("gen-b"), system_line(SYSTEM)]
    for turn in conversation:
        lines = _lines(turn)
        mangled: list[dict[str, Any]] = []
        for line in lines:
            action = draw(st.sampled_from(["keep", "keep", "drop", "repeat", "orphan"]))
            content = line["content"] if isinstance(line["content"], list) else []
            calls = [part for part in content if part.get("type") == "tool-call"]
            if line["role"] == "assistant" and calls and action == "repeat":
                # A second call with an id already used in this message.
                twin = {**calls[0], "input": {"twin": True}}
                mangled.append({**line, "content": [*content, twin]})
            elif line["role"] != "tool" or action == "keep":
                mangled.append(line)
            elif action == "repeat":
                mangled += [line, line]
            elif action == "orphan":
                mangled += [line, {"role": "tool", "content": [
                    {"type": "tool-result", "toolCallId": "nobody", "toolName": "bash",
                     "output": {"type": "text", "value": "?"}}]}]  # fmt: skip
        if draw(st.booleans()) and len(mangled) > 2:
            # Move the first result line after a user message of its own.
            tool_at = next((i for i, ln in enumerate(mangled) if ln["role"] == "tool"), None)
            if tool_at is not None:
                moved = mangled.pop(tool_at)
                mangled += [user_line("meanwhile"), moved]
        values += mangled
    data, _numbers = _render(values, draw(LAYOUTS))
    kept = [m for turn in conversation for m in _expected(turn) if m.role != "tool"]
    return data, kept


@settings(max_examples=200)
@given(broken_files())
def test_a_broken_tool_structure_is_repaired_into_a_paired_history(
    case: tuple[bytes, list[Message]],
) -> None:
    data, kept = case
    parsed = parse_legacy_file(NAME, data)
    assert_paired(parsed.messages)
    # Every user and assistant message survives, in order; only tool messages change.
    survivors = [m for m in parsed.messages if m.role != "tool" and m.text != "meanwhile"]
    assert survivors == kept
    synthetic = [m for m in parsed.messages if m.kind == "synthetic"]
    assert all(m.text == LOST_RESULT and m.is_error for m in synthetic)
    lost = [w for w in parsed.warnings if "had no result" in w]
    assert len(lost) == len(synthetic)
    assert all(w.startswith(f"{NAME}:") for w in parsed.warnings)


# --- the same through a real database ----------------------------------------------------


@pytest.fixture(scope="module")
def profile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Store]]:
    root = tmp_path_factory.mktemp("legacy-property") / "profile"
    store = open_store(root)
    (root / "sessions").mkdir()
    yield root, store
    store.close()


_numbers = itertools.count()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        broken_files().map(lambda case: case[0]),
        st.tuples(conversations_(), st.integers(1, 10)).map(
            lambda pair: _render(_file(pair[0])[0], Layout(False, False, True, frozenset()))[0][
                : -pair[1]
            ]
        ),
        st.binary(max_size=200),
    )
)
def test_importing_any_file_stores_a_paired_history_or_nothing(
    profile: tuple[Path, Store], data: bytes
) -> None:
    root, store = profile
    number = next(_numbers)
    # A fresh session id for each example, so that no two files collide.
    data = data.replace(b'"gen-b"', f'"imp-{number}"'.encode()).replace(
        b'"gen-1"', f'"imp-{number}"'.encode()
    )
    name = f"f{number:05d}.jsonl"
    (root / "sessions" / name).write_bytes(data)
    report = import_legacy(store, root, announce=False)
    if report.imported:
        assert report.imported == (name,)
        session_id = f"imp-{number}"
        messages = conversations.load_messages(store, session_id)
        assert_paired(messages)
        assert session_table.load_state(store, session_id).session.messages == len(messages)
    else:
        assert len(report.rejected) == 1
        assert report.rejected[0].startswith(f"{name}:")
        count = store.connection.execute(
            "SELECT count(*) FROM sessions WHERE id = ?", (f"imp-{number}",)
        ).fetchall()[0][0]
        assert count == 0
