"""The elision marker of a result stored cut to the window's cap says what the tool produced,
not the size of the cut copy (the summarizer is told each payload's real size)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.compaction.result_cap import cap_result, needs_cap, whole_size
from seri.pure.compaction.summarizer_request import elide_payloads
from seri.pure.compaction.window import MIN_RESULT_CHARS
from seri.pure.session.records import ToolCall, assistant, tool_result
from seri.pure.tools.output_capture import OutputCapture, capped_output

texts = st.text(alphabet=st.sampled_from('aé€😀\n{}" x'), min_size=0, max_size=60_000)


@given(texts, st.integers(MIN_RESULT_CHARS, 20_000), st.sampled_from(["/s/result-a.txt", ""]))
def test_a_cut_result_knows_the_size_of_the_whole(text: str, cap: int, spill: str) -> None:
    cut = cap_result(text, cap, spill)
    whole = len(text.encode("utf-8"))
    assert whole_size(cut) == (whole if needs_cap(text, cap) else None)


@given(texts, st.integers(MIN_RESULT_CHARS, 20_000), st.integers(0, 4_000))
def test_the_summarizer_is_told_what_the_tool_produced(
    text: str, cap: int, elide_bytes: int
) -> None:
    call = ToolCall("c1", "read_file", '{"path": "big.txt"}')
    stored = tool_result(call, cap_result(text, cap, "/s/result-a.txt"))
    (_, copy) = elide_payloads((assistant("", (call,)), stored), elide_bytes)
    if len(stored.text.encode("utf-8")) <= elide_bytes:
        assert copy.text == stored.text
        return
    marker = json.loads(copy.text)
    expected = len((text if needs_cap(text, cap) else stored.text).encode("utf-8"))
    assert marker == {"elided": True, "originalBytes": expected}


def test_a_marker_written_before_sizes_were_said_gives_the_characters() -> None:
    older = "head\n[… 900 of 1000 characters (9 of 10 lines) left out here to fit the context"
    assert whole_size(older + " window; the rest was not kept …]\ntail") == 1000


@given(
    st.text(alphabet=st.sampled_from(" \n-=:/.abcXYZ019é€😀"), max_size=3_000),
    st.integers(1, 300),
    st.integers(1, 300),
)
def test_a_command_output_cut_by_its_capture_knows_its_size(
    text: str, head: int, tail: int
) -> None:
    capture = OutputCapture(head, tail)
    capture.feed(text.encode())
    shown = capped_output(capture, "/spill/bash-1.log")
    expected = len(text.encode()) if shown.truncated else None
    assert whole_size(shown.text) == expected
