"""seri.pure.inputs.bounded_input and the readers built on it: whatever the bytes, however they are
cut and nested, the answer is the same, nothing over a limit is held, no error but a
ValueError comes out, and the work is linear in what arrived."""

from __future__ import annotations

import json
import os
import re
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.acp import acp_wire
from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import (
    MAX_DEPTH,
    MCP_STDIO,
    PROVIDER_STREAM,
    SOURCES,
    BoundedInputError,
    InputLimits,
    LineSplitter,
    OverlongLine,
    json_depth_over,
)
from seri.pure.mcp import jsonrpc
from seri.pure.provider.server_windows import window_from_listing
from seri.pure.provider.sse import SSEEvent, SSEParser
from seri.pure.provider.stream_assembly import assemble_completion

SMALL = InputLimits("the test source", max_line_bytes=64, max_message_bytes=64, max_total_bytes=512)


def _true_depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_true_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_true_depth, value), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab\u2028é', max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=300)
@given(json_values, st.integers(0, 12))
def test_depth_of_valid_json_is_measured_exactly(value: object, limit: int) -> None:
    """Brackets inside strings (escaped quotes too) never count; the rest counts exactly."""
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        assert json_depth_over(text, limit) == (_true_depth(value) > limit)


@settings(max_examples=200)
@given(st.text(alphabet='[]{}"\\,:a1 \n', max_size=300))
def test_any_text_is_answered_and_parsing_never_goes_past_the_depth(text: str) -> None:
    """Not JSON at all (unterminated strings, stray brackets): an answer, never an error;
    and ``loads`` gives a value no deeper than the limit or a ValueError."""
    json_depth_over(text, 3)
    try:
        value = json_text.loads(text, max_depth=3)
    except ValueError:
        return
    assert _true_depth(value) <= 3


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 490, 100_000])
def test_deep_json_is_refused_before_parsing(depth: int) -> None:
    for text in ("[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth):
        with pytest.raises(ValueError, match="nested too deeply"):
            json_text.loads(text)
        with pytest.raises(BoundedInputError, match=r"^the MCP server: JSON nested too deeply"):
            json_text.loads_bounded(text, MCP_STDIO)
    assert json_text.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)


def test_depth_checking_is_linear() -> None:
    """Twice the text, about twice the time (not four times): a quadratic check would not
    stay inside the bound at these sizes."""
    unit = "[" * 90 + '"x\\"]["' + "]" * 90

    def seconds(copies: int) -> float:
        text = "[" + ",".join([unit] * copies) + "]"
        start = time.perf_counter()
        assert not json_depth_over(text, MAX_DEPTH)
        return time.perf_counter() - start

    small, large = min(seconds(2_000) for _ in range(3)), min(seconds(8_000) for _ in range(3))
    assert large < small * 4 * 2.5


# --- lines -----------------------------------------------------------------------------------


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(data)) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    return [*pieces, data[start:]]


def _lines(pieces: list[bytes], limit: int, lone_cr: bool) -> list[bytes | OverlongLine]:
    splitter = LineSplitter(limit, lone_cr=lone_cr)
    out = [line for piece in pieces for line in splitter.feed(piece)]
    rest = splitter.finish()
    return out + ([rest] if rest is not None else [])


line_bytes = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b""))


@settings(max_examples=300)
@given(
    st.lists(st.tuples(line_bytes, st.sampled_from([b"\n", b"\r\n", b"\r"])), max_size=10),
    st.lists(st.integers(0, 500), max_size=12),
    st.integers(1, 30),
    st.booleans(),
)
def test_lines_are_the_same_however_the_bytes_are_cut(
    lines: list[tuple[bytes, bytes]], cuts: list[int], limit: int, lone_cr: bool
) -> None:
    data = b"".join(text + end for text, end in lines)
    ends = re.compile(rb"\r\n|\r|\n" if lone_cr else rb"\n")
    *ended, rest = ends.split(data)
    expected = [text if len(text) <= limit else OverlongLine(limit) for text in ended]
    if rest:  # what finish() gives back, unless it was already reported as overlong
        expected.append(rest if len(rest) <= limit else OverlongLine(limit))
    whole = _lines([data], limit, lone_cr)
    assert whole == expected
    assert _lines(_split(data, cuts), limit, lone_cr) == expected
    assert _lines([data[i : i + 1] for i in range(len(data))], limit, lone_cr) == expected


def test_a_line_that_never_ends_is_given_up_at_its_limit_and_not_held() -> None:
    """1 MiB chunks of one endless line: reported once, at the limit; nothing held after."""
    splitter = LineSplitter(4 << 20)
    chunk = b"x" * (1 << 20)
    reported = []
    tracemalloc.start()
    try:
        for _ in range(64):
            reported += splitter.feed(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert reported == [OverlongLine(4 << 20)]
    assert peak < 12 << 20
    assert splitter.feed(b"tail\nnext\n") == [b"next"]


# --- SSE -------------------------------------------------------------------------------------


def test_an_sse_line_that_never_ends_raises_at_its_limit_in_linear_time() -> None:
    """A provider dripping one `data:` line forever: the parser gives up at the line limit,
    and each chunk costs the same (the unfinished line is not rescanned)."""
    limits = InputLimits("the provider's stream", 8 << 20, 8 << 20, 64 << 20)
    parser = SSEParser(limits)
    parser.feed(b"data: ")
    chunk = b"a" * 65_536
    start = time.perf_counter()
    fed = 0
    with pytest.raises(BoundedInputError, match=r"^the provider's stream: a line longer"):  # noqa: PT012
        while fed < 1 << 10:
            fed += 1
            parser.feed(chunk)
    assert fed == (8 << 20) // len(chunk)  # the chunk that passed 8 MiB
    assert time.perf_counter() - start < 5


@settings(max_examples=200)
@given(
    st.lists(
        st.sampled_from(
            [b"data: ", b"x" * 30, b"\n", b"\r", b"\r\n", b"\xff", "é".encode(), b":c", b"event: e"]
        ),
        max_size=40,
    ),
    st.lists(st.integers(0, 400), max_size=10),
)
def test_sse_over_small_limits_raises_only_bounded_input_errors(
    parts: list[bytes], cuts: list[int]
) -> None:
    data = b"".join(parts)
    parser = SSEParser(SMALL)
    events = []
    try:
        for piece in _split(data, cuts):
            events += parser.feed(piece)
        events += parser.finish()
    except BoundedInputError as exc:
        refused = str(exc)
    else:
        refused = "the test source: "
    assert refused.startswith("the test source: ")
    assert all(len(e.data) <= 64 for e in events if isinstance(e, SSEEvent))


def test_the_whole_stream_is_bounded() -> None:
    parser = SSEParser(SMALL)
    for _ in range(512 // 9):
        parser.feed(b"data: 1\n\n")
    with pytest.raises(BoundedInputError, match="in all"):
        parser.feed(b"data: 1\n\n")


@settings(max_examples=200)
@given(json_values, st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_rpc_lines_in_any_encoding_are_read_or_unreadable(value: object, encoding: str) -> None:
    """A line of an MCP server: read, or named unreadable (over a limit, or not UTF-8
    JSON); never an exception."""
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"v": value}}).encode(encoding)
    messages = jsonrpc.decode_line(line, SMALL)
    assert messages
    if isinstance(messages[0], jsonrpc.Unreadable) and messages[0].over_limit:
        assert "seri's limit" in messages[0].reason


def test_deep_rpc_lines_are_unreadable_over_the_limit() -> None:
    deep = '{"jsonrpc":"2.0","id":1,"result":' + "[" * 100_000 + "]" * 100_000 + "}"
    (message,) = jsonrpc.decode_line(deep.encode())
    assert isinstance(message, jsonrpc.Unreadable) and message.over_limit


def test_every_source_has_sane_limits() -> None:
    for name, limits in SOURCES.items():
        assert limits.max_depth == MAX_DEPTH, name
        assert 0 < limits.max_line_bytes <= limits.max_message_bytes or name, name
        assert limits.max_total_bytes == 0 or limits.max_total_bytes >= limits.max_message_bytes
    assert PROVIDER_STREAM.max_total_bytes > PROVIDER_STREAM.max_message_bytes


# --- the provider's whole answers (a 200 JSON body, /models) ---------------------------------

answer_bodies = st.one_of(
    json_values.map(json.dumps),
    st.integers(1, 400).map(lambda n: '{"choices":' + "[" * n + "]" * n + "}"),
    st.builds(
        lambda content, usage: json.dumps(
            {"choices": [{"message": {"role": "assistant", "content": content}}], "usage": usage}
        ),
        json_values,
        json_values,
    ),
    st.binary(max_size=60),
)


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100")), deadline=None)
@given(answer_bodies)
def test_H2_fuzz_provider_answers(body: str | bytes) -> None:
    """What ``ProviderClient._whole`` and the window lookup do with a body: parse with the
    bounded reader, then assemble; a ValueError or a result, nothing else."""
    try:
        parsed = json_text.loads_lenient_numbers(body)
    except ValueError:
        return
    if isinstance(parsed, dict):
        assemble_completion(parsed)
        window_from_listing(parsed, "m")


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "100")), deadline=None)
@given(
    st.one_of(
        st.text(max_size=80),
        json_values.map(lambda v: json.dumps({"jsonrpc": "2.0", "id": 1, "params": v})),
        st.integers(0, 50_000).map(lambda n: '{"jsonrpc":"2.0","method":"m","params":' + "[" * n),
    )
)
def test_H2_fuzz_acp_lines(line: str) -> None:
    """What the ACP client writes on stdin, a line at a time: a call, a reply or a malformed
    message (answered with an error), never an exception; nothing deeper than the limit."""
    assert isinstance(
        acp_wire.parse_line(line), acp_wire.ClientMessage | acp_wire.Reply | acp_wire.Malformed
    )
