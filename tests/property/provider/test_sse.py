"""SSE framing and stream assembly: the same bytes give the same answer however they are cut."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.inputs.bounded_input import PROVIDER_STREAM
from seri.pure.provider.sse import DONE, SSEDone, SSEEvent, SSEParser
from seri.pure.provider.stream_assembly import StreamAssembler, StreamResult, assemble_completion

# --- framing ---------------------------------------------------------------------------------

LINE_TEXT = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"),
    max_size=30,
)
ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def blocks(draw: st.DrawFn) -> tuple[str, list[SSEEvent | SSEDone], int]:
    """One comment or one event as text, with what a parser must make of it."""
    ending = draw(ENDINGS)
    if draw(st.booleans()):
        return f":{draw(LINE_TEXT)}{ending}", [], 1
    if draw(st.integers(0, 9)) == 0:
        return f"data: [DONE]{ending}{ending}", [DONE], 0
    name = draw(st.sampled_from(["", "message", "update", "error"]))
    lines = draw(st.lists(LINE_TEXT, min_size=1, max_size=3))
    text = f"event: {name}{ending}" if name else ""
    text += "".join(f"data: {line}{ending}" for line in lines) + ending
    return text, [SSEEvent(data="\n".join(lines), event=name or "message")], 0


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[SSEEvent | SSEDone], int]:
    parts = draw(st.lists(blocks(), max_size=8))
    text = "".join(part[0] for part in parts)
    if draw(st.booleans()):
        text = "\ufeff" + text
    events = [event for part in parts for event in part[1]]
    return text.encode("utf-8"), events, sum(part[2] for part in parts)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(cut, len(data)) for cut in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return pieces


def parse(pieces: list[bytes]) -> tuple[list[SSEEvent | SSEDone], int]:
    parser = SSEParser(PROVIDER_STREAM)
    events: list[SSEEvent | SSEDone] = []
    for piece in pieces:
        events.extend(parser.feed(piece))
    events.extend(parser.finish())
    return events, parser.comments


@settings(max_examples=300, deadline=None)
@given(streams(), st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_any_chunking_gives_the_same_events(
    stream: tuple[bytes, list[SSEEvent | SSEDone], int], cuts: list[int]
) -> None:
    data, expected, comments = stream
    assert parse([data]) == (expected, comments)
    assert parse(split(data, cuts)) == (expected, comments)


@settings(max_examples=50, deadline=None)
@given(streams())
def test_byte_by_byte_gives_the_same_events(
    stream: tuple[bytes, list[SSEEvent | SSEDone], int],
) -> None:
    data, expected, comments = stream
    assert parse([data[i : i + 1] for i in range(len(data))]) == (expected, comments)


def test_comments_are_skipped_and_done_is_recognised() -> None:
    data = (
        b': OPENROUTER PROCESSING\n\ndata: {"a":1}\n\n: OPENROUTER PROCESSING\n\ndata: [DONE]\n\n'
    )
    events, comments = parse([data])
    assert events == [SSEEvent(data='{"a":1}'), DONE]
    assert comments == 2


def test_a_half_line_at_the_end_is_dropped_but_a_whole_one_is_kept() -> None:
    assert parse([b'data: {"a":1}\n'])[0] == [SSEEvent(data='{"a":1}')]
    assert parse([b'data: {"a":1}\n\ndata: {"b"'])[0] == [SSEEvent(data='{"a":1}')]


def test_llama_cpp_error_field_becomes_an_error_event() -> None:
    events, _ = parse([b'error: {"code":400,"message":"too big"}\n\n'])
    assert events == [SSEEvent(data='{"code":400,"message":"too big"}', event="error")]


def test_multibyte_character_split_across_chunks() -> None:
    data = 'data: {"content":"héllo ☃"}\n\n'.encode()
    snowman = data.index("☃".encode())
    events, _ = parse([data[: snowman + 1], data[snowman + 1 : snowman + 2], data[snowman + 2 :]])
    assert events == [SSEEvent(data='{"content":"héllo ☃"}')]


# --- assembling ------------------------------------------------------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "gen-1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }


def assemble(*chunks: dict[str, Any], done: bool = True) -> StreamResult:
    assembler = StreamAssembler()
    for item in chunks:
        assembler.feed(item)
    if done:
        assembler.feed_event(DONE)
    return assembler.result()


@st.composite
def fragmented_calls(draw: st.DrawFn) -> tuple[list[tuple[str, str, str]], list[dict[str, Any]]]:
    """Several tool calls, their arguments cut into fragments, the fragments interleaved."""
    count = draw(st.integers(1, 3))
    calls = [(f"call_{n}", f"tool_{n}", draw(st.text(max_size=40))) for n in range(count)]
    queues: list[list[dict[str, Any]]] = []
    for index, (call_id, name, arguments) in enumerate(calls):
        cuts = sorted(draw(st.lists(st.integers(0, len(arguments)), max_size=6)))
        pieces = [arguments[a:b] for a, b in zip([0, *cuts], [*cuts, len(arguments)], strict=True)]
        function: dict[str, Any] = {"name": name}
        if draw(st.booleans()):
            function["arguments"] = ""
        first = {"index": index, "id": call_id, "type": "function", "function": function}
        queue = [first] + [{"index": index, "function": {"arguments": p}} for p in pieces]
        queues.append(queue)
    fragments: list[dict[str, Any]] = []
    while any(queues):
        live = [q for q in queues if q]
        queue = live[draw(st.integers(0, len(live) - 1))]
        fragments.append(queue.pop(0))
    return calls, fragments


@settings(max_examples=200, deadline=None)
@given(fragmented_calls())
def test_tool_call_fragments_merge_into_the_concatenation(
    case: tuple[list[tuple[str, str, str]], list[dict[str, Any]]],
) -> None:
    calls, fragments = case
    chunks = [chunk({"tool_calls": [fragment]}) for fragment in fragments]
    result = assemble(*chunks, chunk({}, "tool_calls"))
    got = {(c.id, c.name, c.arguments) for c in result.message.tool_calls}
    assert got == set(calls)
    assert result.complete
    assert result.tool_calls_runnable


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=10), max_size=10))
def test_text_deltas_concatenate(pieces: list[str]) -> None:
    result = assemble(*[chunk({"content": p}) for p in pieces], chunk({}, "stop"))
    assert result.message.text == "".join(pieces)


def test_usage_chunk_with_empty_choices_and_provider() -> None:
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "completion_tokens_details": {"reasoning_tokens": 7},
        "prompt_tokens_details": {"cached_tokens": 50},
        "cost": 0.0012,
    }
    result = assemble(
        chunk({"content": "hi"}, provider="DeepInfra"),
        chunk({}, "stop"),
        {"id": "gen-1", "choices": [], "usage": usage, "provider": "DeepInfra"},
    )
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (100, 20)
    assert (result.usage.reasoning_tokens, result.usage.cached_tokens) == (7, 50)
    assert result.usage.cost == 0.0012
    assert result.usage.provider == "DeepInfra"
    assert result.finish_reason == "stop"
    assert result.complete
    assert result.done


def test_reasoning_fields_and_details_kept_in_order() -> None:
    detail_a = {
        "type": "reasoning.text",
        "text": "Let me ",
        "format": "anthropic-claude-v1",
        "index": 0,
    }
    detail_b = {"type": "reasoning.text", "text": "think.", "signature": "sig==", "index": 0}
    result = assemble(
        chunk({"reasoning": "Let me ", "reasoning_details": [detail_a]}),
        chunk({"reasoning": "think.", "reasoning_details": [detail_b]}),
        chunk({"reasoning_content": " More."}),
        chunk({"reasoning": "x", "reasoning_content": "x"}),
        chunk({"content": "Answer"}, "stop"),
    )
    assert result.message.reasoning == "Let me think. More.x"
    assert json.loads(result.message.reasoning_details) == [detail_a, detail_b]
    assert result.message.text == "Answer"


def test_reasoning_only_in_details_still_gives_reasoning_text() -> None:
    result = assemble(
        chunk({"reasoning_details": [{"type": "reasoning.summary", "summary": "Plan."}]}),
        chunk({}, "stop"),
    )
    assert result.message.reasoning == "Plan."


def test_stream_without_finish_or_done_is_incomplete_and_calls_not_runnable() -> None:
    result = assemble(
        chunk({"content": "partial "}),
        chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "write_file"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a'}}]}),
        done=False,
    )
    assert not result.complete
    assert result.failure is not None
    assert result.failure.kind == "interrupted"
    assert result.message.text == "partial "
    assert result.message.tool_calls[0].arguments == '{"path": "a'
    assert not result.tool_calls_runnable
    assert "did not finish" in result.unrunnable_reason


def test_length_finish_in_the_middle_of_arguments_makes_calls_unrunnable() -> None:
    result = assemble(
        chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "bash"}}]}),
        chunk(
            {"tool_calls": [{"index": 0, "function": {"arguments": '{"command": "rm'}}]}, "length"
        ),
    )
    assert result.complete
    assert not result.tool_calls_runnable
    assert "length" in result.unrunnable_reason


def test_openrouter_error_chunk_keeps_partial_text_and_usage() -> None:
    error_chunk = {
        "id": "gen-1",
        "error": {"code": "server_error", "message": "Provider disconnected unexpectedly"},
        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2},
    }
    result = assemble(chunk({"content": "Half an ans"}), error_chunk, done=False)
    assert not result.complete
    assert result.failure is not None
    assert result.failure.kind == "stream_error"
    assert "Provider disconnected unexpectedly" in result.failure.message
    assert result.message.text == "Half an ans"
    assert result.usage is not None
    assert result.usage.input_tokens == 5


def test_vllm_error_object_is_an_error() -> None:
    result = assemble(
        chunk({"content": "a"}),
        {"object": "error", "message": "Engine died", "type": "InternalServerError", "code": 500},
        done=False,
    )
    assert result.failure is not None
    assert "Engine died" in result.failure.message
    assert result.message.text == "a"


def test_in_stream_overflow_is_classified_as_overflow() -> None:
    assembler = StreamAssembler()
    event = SSEEvent(
        data='{"code":400,"message":"request (17993 tokens) exceeds the available context size '
        '(16384 tokens), try increasing it","type":"exceed_context_size_error"}',
        event="error",
    )
    assembler.feed_event(event)
    result = assembler.result()
    assert result.failure is not None
    assert result.failure.kind == "context_overflow"


def test_not_json_chunk_is_a_malformed_failure() -> None:
    assembler = StreamAssembler()
    assembler.feed_event(SSEEvent(data="not-json"))
    assert assembler.result().failure is not None
    assert assembler.result().failure.kind == "malformed"  # type: ignore[union-attr]


def test_recorded_argument_variants() -> None:
    # simonw/llm's recorded variants a-d of how backends start a streamed call.
    def run(first: dict[str, Any], rest: list[str]) -> str:
        chunks = [chunk({"tool_calls": [first]})]
        chunks += [
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in rest
        ]
        return assemble(*chunks, chunk({}, "tool_calls")).message.tool_calls[0].arguments

    base = {"index": 0, "id": "c", "type": "function"}
    assert run({**base, "function": {"name": "f", "arguments": ""}}, ["{}"]) == "{}"
    assert run({**base, "function": {"name": "f", "arguments": "{}"}}, []) == "{}"
    assert (
        run({**base, "id": "llm_version:0", "function": {"name": "f"}}, ['{"a"', ":1}"])
        == '{"a":1}'
    )
    assert run({**base, "function": {"name": "f", "arguments": None}}, ["{}"]) == "{}"


def test_repeated_id_and_name_are_not_concatenated() -> None:
    fragment = {"index": 0, "id": "c1", "type": "function", "function": {"name": "read_file"}}
    result = assemble(
        chunk({"tool_calls": [{**fragment, "function": {"name": "read_file", "arguments": "{"}}]}),
        chunk({"tool_calls": [{**fragment, "function": {"name": "read_file", "arguments": "}"}}]}),
        chunk({}, "tool_calls"),
    )
    (call,) = result.message.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "read_file", "{}")


def test_whole_calls_sharing_index_zero_stay_separate() -> None:
    result = assemble(
        chunk(
            {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}}]}
        ),
        chunk(
            {"tool_calls": [{"index": 0, "id": "b", "function": {"name": "g", "arguments": "{}"}}]}
        ),
        chunk({}, "tool_calls"),
    )
    assert [(c.id, c.name) for c in result.message.tool_calls] == [("a", "f"), ("b", "g")]


def test_missing_ids_get_a_stable_fallback() -> None:
    result = assemble(
        chunk({"tool_calls": [{"index": 0, "function": {"name": "f", "arguments": "{}"}}]}),
        chunk({}, "tool_calls"),
    )
    assert result.message.tool_calls[0].id == "call_0"


def test_non_streaming_completion() -> None:
    body = {
        "id": "gen-2",
        "provider": "OpenAI",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning": "hmm",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4},
    }
    result = assemble_completion(body)
    assert result.complete
    assert result.tool_calls_runnable
    assert result.message.reasoning == "hmm"
    assert result.usage is not None
    assert result.usage.provider == "OpenAI"


# --- typed content parts and refusals --------------------------------------------------------

PIECE = st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=8)
DELTAS = st.lists(
    st.one_of(
        st.tuples(st.just("text"), PIECE),
        st.tuples(st.just("text_part"), PIECE),
        st.tuples(st.just("thinking_part"), PIECE),
        st.tuples(st.just("refusal"), PIECE),
    ),
    max_size=12,
)


def _delta(kind: str, piece: str) -> dict[str, Any]:
    if kind == "text":
        return {"content": piece}
    if kind == "text_part":
        return {"content": [{"type": "text", "text": piece}]}
    if kind == "thinking_part":
        return {"content": [{"type": "thinking", "thinking": [{"type": "text", "text": piece}]}]}
    return {"refusal": piece}


@given(DELTAS)
def test_parts_and_refusals_assemble_in_order(deltas: list[tuple[str, str]]) -> None:
    """Text, typed text parts and refusals make the answer in arrival order; thinking parts
    make the reasoning; none is lost or doubled."""
    assembler = StreamAssembler()
    for kind, piece in deltas:
        assembler.feed({"choices": [{"index": 0, "delta": _delta(kind, piece)}]})
    assembler.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    result = assembler.result()
    assert result.complete
    assert result.message.text == "".join(p for k, p in deltas if k != "thinking_part")
    assert result.message.reasoning == "".join(p for k, p in deltas if k == "thinking_part")
    assert result.refusal == "".join(p for k, p in deltas if k == "refusal")
    assert assembler.delivered == bool(deltas)
