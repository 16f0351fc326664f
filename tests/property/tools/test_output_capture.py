"""The bash tool's output cap (seri.pure.tools.output_capture), property by property.

However the output arrives (chunks cut anywhere, inside a UTF-8 character or a token), what
the model is shown keeps within the head and tail caps, is a true head and a true tail of the
output, says exactly how much was left out, never splits a character or a token, and does
not depend on where the chunks were cut.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.tools.output_capture import (
    HEAD_LINES,
    SEAM_REACH,
    TAIL_LINES,
    CappedOutput,
    OutputCapture,
    capped_output,
)

MARKER = re.compile(
    r"\n\[… (\d+) bytes / (\d+) lines omitted of (\d+) bytes / (\d+) lines(; the full output "
    r"is in [^\n]*)? …\]\n"
)
# Output text: ASCII words and punctuation, multi-byte characters, newlines; no NUL and no
# U+FFFD, so any replacement character in the result would be a split the cap made.
CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00\ufffd")
OUTPUTS = st.text(alphabet=st.one_of(st.sampled_from(" \n-=:/.abcXYZ019é€😀"), CHARS))
CAPS = st.integers(min_value=1, max_value=300)
# Where the output is cut into the chunks a pipe delivers.
CUTS = st.lists(st.integers(min_value=0), max_size=8)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    edges = [0, *points, len(data)]
    return [data[a:b] for a, b in itertools.pairwise(edges) if b > a]


def _capture(data: bytes, head: int, tail: int, cuts: list[int]) -> tuple[OutputCapture, str]:
    capture = OutputCapture(head, tail)
    for chunk in _chunks(data, cuts):
        capture.feed(chunk)
    return capture, capped_output(capture, "/spill/bash-1.log").text


def _split(shown: str) -> tuple[str, re.Match[str] | None, str]:
    found = MARKER.search(shown)
    if found is None:
        return shown, None, ""
    return shown[: found.start()], found, shown[found.end() :]


@given(OUTPUTS, CAPS, CAPS, CUTS)
def test_the_cap_is_respected_and_head_and_tail_are_kept(
    text: str, head: int, tail: int, cuts: list[int]
) -> None:
    data = text.encode()
    _, shown = _capture(data, head, tail, cuts)
    kept_head, marker, kept_tail = _split(shown)
    if marker is None:
        assert len(data) <= head + tail
        assert shown == text
        return
    assert len(kept_head.encode()) <= head
    assert len(kept_tail.encode()) <= tail
    assert text.startswith(kept_head)
    assert text.endswith(kept_tail)


@given(OUTPUTS, CAPS, CAPS, CUTS)
def test_the_marker_says_exactly_what_was_left_out(
    text: str, head: int, tail: int, cuts: list[int]
) -> None:
    data = text.encode()
    capture, shown = _capture(data, head, tail, cuts)
    capped = capped_output(capture, "/spill/bash-1.log")
    kept_head, marker, kept_tail = _split(shown)
    assert (marker is not None) == capped.truncated == (len(data) > head + tail)
    assert shown.count("omitted of") == (1 if capped.truncated else 0)
    if marker is None:
        return
    omitted_bytes, omitted_lines, total, lines = (int(marker.group(i)) for i in range(1, 5))
    assert (omitted_bytes, omitted_lines) == (capped.omitted_bytes, capped.omitted_lines)
    assert total == len(data)
    assert lines == text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    assert omitted_bytes == len(data) - len(kept_head.encode()) - len(kept_tail.encode())
    # The marker's leading line break stands for the one that ends the head kept in memory.
    middle = text[len(kept_head) : len(text) - len(kept_tail)]
    ends_head = data[:head].endswith(b"\n")
    assert omitted_lines == middle.count("\n") - (1 if ends_head else 0)
    assert marker.group(5) == "; the full output is in /spill/bash-1.log"


@given(OUTPUTS, CAPS, CAPS, CUTS)
def test_utf8_is_never_split_and_chunking_does_not_matter(
    text: str, head: int, tail: int, cuts: list[int]
) -> None:
    data = text.encode()
    capture, shown = _capture(data, head, tail, cuts)
    _, whole = _capture(data, head, tail, [])
    assert "\ufffd" not in shown
    assert not capped_output(capture).invalid_utf8
    assert shown == whole


TOKEN = st.text(alphabet="abcdefXYZ0123456789", min_size=20, max_size=60).map(lambda s: "sk-" + s)
# What a key or token can be made of (the cut never falls inside a run of these).
TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-.~+/=:]+")
# The cut moves back (or forward) to the nearest separator; a head or tail shorter than the
# token it starts in has none, which at the real caps (256 bytes at least) a key never is.
LONGER_THAN_A_TOKEN = st.integers(min_value=64, max_value=300)


@given(
    st.lists(st.one_of(TOKEN, st.text(alphabet=" \n.,é€", min_size=1, max_size=40))),
    LONGER_THAN_A_TOKEN,
    LONGER_THAN_A_TOKEN,
    CUTS,
)
def test_a_token_is_shown_whole_or_not_at_all(
    parts: list[str], head: int, tail: int, cuts: list[int]
) -> None:
    text = " ".join(parts)
    _, shown = _capture(text.encode(), head, tail, cuts)
    kept_head, _, kept_tail = _split(shown)
    whole_runs = set(TOKEN_RUN.findall(text))
    for kept in (kept_head, kept_tail):
        assert set(TOKEN_RUN.findall(kept)) <= whole_runs


@given(st.integers(min_value=0, max_value=300), st.booleans())
def test_very_many_lines_are_capped_by_count(extra: int, final_newline: bool) -> None:
    count = HEAD_LINES + TAIL_LINES + extra
    text = "\n".join(f"line {i}" for i in range(count)) + ("\n" if final_newline else "")
    capture = OutputCapture(10**6, 10**6)
    capture.feed(text.encode())
    capped: CappedOutput = capped_output(capture)
    assert capped.omitted_lines == extra
    assert capped.truncated == (extra > 0)
    lines = capped.text.removesuffix("\n").split("\n")
    assert len(lines) <= HEAD_LINES + TAIL_LINES + 2
    assert lines[0] == "line 0"
    assert lines[-1] == f"line {count - 1}"
    assert capture.shown_whole == (extra == 0)


def test_seam_reach_is_longer_than_any_key() -> None:
    # A key or token is far shorter than how far a cut may move to avoid splitting it.
    assert SEAM_REACH >= 256
