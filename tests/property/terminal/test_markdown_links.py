"""Links in a streamed answer, and which terminals get them as OSC 8 hyperlinks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.terminal.hyperlink_support import supports_hyperlinks
from seri.pure.terminal.markdown_stream import MarkdownStream, render_markdown
from seri.pure.terminal.terminal_style import paint_spans

PIECES = ["[", "]", "(", ")", "see ", "docs", "https://x.io/a", " ", "`", "*", "\x1b", "\n", "é"]
ANSWER = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)


def _streamed(text: str, cuts: list[int], hyperlinks: bool) -> list[tuple[str, str]]:
    stream, out, start = MarkdownStream(hyperlinks), [], 0
    for cut in sorted(cuts):
        out += stream.feed(text[start:cut])
        start = cut
    out += stream.feed(text[start:]) + stream.finish()
    return _joined(out)


def _joined(spans: list[tuple[str, str]]) -> list[tuple[str, str]]:
    joined: list[tuple[str, str]] = []
    for style, text in spans:
        if joined and joined[-1][0] == style:
            joined[-1] = (style, joined[-1][1] + text)
        elif text:
            joined.append((style, text))
    return joined


@given(ANSWER, st.lists(st.integers(min_value=0, max_value=200), max_size=6), st.booleans())
def test_any_chunking_gives_the_same_spans(text: str, cuts: list[int], hyperlinks: bool) -> None:
    cuts = [c for c in cuts if c <= len(text)]
    assert _streamed(text, cuts, hyperlinks) == _streamed(text, [], hyperlinks)


@given(ANSWER)
def test_text_that_is_no_link_is_given_back_whole(text: str) -> None:
    """Without a completed ``[text](url)`` no bracket or parenthesis is lost."""
    shown = "".join(t for _, t in render_markdown(text))
    if "](" not in text:
        for mark in "[]()":
            assert shown.count(mark) == text.count(mark)


@given(ANSWER, st.booleans())
def test_only_seris_own_escape_sequences_reach_the_terminal(text: str, hyperlinks: bool) -> None:
    painted = paint_spans(_streamed(text, [], hyperlinks), colour=True)
    for start in range(len(painted)):
        if painted[start] == "\x1b":
            rest = painted[start + 1 :]
            assert rest.startswith(("[", "]8;;https://x.io/a\x1b\\", "]8;;\x1b\\", "\\"))


def test_a_link_is_its_text_and_url_or_a_hyperlink() -> None:
    text = "see [the docs](https://x.io/a) or [`f`](src/f.py)\n"
    assert render_markdown(text) == [
        ("", "see "),
        ("link", "the docs"),
        ("notice", " (https://x.io/a)"),
        ("", " or "),
        ("link", "f"),
        ("notice", " (src/f.py)"),
        ("", "\n"),
    ]
    stream = MarkdownStream(hyperlinks=True)
    spans = stream.feed(text) + stream.finish()
    assert ("link https://x.io/a", "the docs") in spans
    painted = paint_spans(spans, colour=True)
    assert "\x1b]8;;https://x.io/a\x1b\\\x1b[4mthe docs\x1b[0m\x1b]8;;\x1b\\" in painted
    # Without colour a hyperlink span is its text alone (the answer is then shown as written).
    assert paint_spans([("link https://x.io/a", "the docs")], colour=False) == "the docs"


def test_a_url_that_could_end_the_sequence_is_never_a_hyperlink() -> None:
    stream = MarkdownStream(hyperlinks=True)
    spans = stream.feed("[x](https://a\x1b\\b) [y](javascript:alert)") + stream.finish()
    assert not any(style.startswith("link ") for style, _ in spans)


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, False),
        ({"TERM_PROGRAM": "iTerm.app", "TERM_PROGRAM_VERSION": "3.5.0"}, True),
        ({"TERM_PROGRAM": "iTerm.app", "TERM_PROGRAM_VERSION": "3.0.15"}, False),
        ({"TERM_PROGRAM": "WezTerm", "TERM_PROGRAM_VERSION": "20240203-110809-5046fc22"}, True),
        ({"TERM_PROGRAM": "vscode", "TERM_PROGRAM_VERSION": "1.95.3"}, True),
        ({"TERM_PROGRAM": "vscode", "TERM_PROGRAM_VERSION": "1.60.0"}, False),
        ({"TERM_PROGRAM": "ghostty"}, True),
        ({"VTE_VERSION": "7600"}, True),
        ({"VTE_VERSION": "4205"}, False),
        ({"WT_SESSION": "b1f1..."}, True),
        ({"TERM": "xterm-kitty"}, True),
        ({"TERM": "xterm-kitty", "CI": "true"}, False),
        ({"TERM_PROGRAM": "tmux", "TERM": "tmux-256color", "VTE_VERSION": "7600"}, False),
        ({"TERM": "screen-256color", "KONSOLE_VERSION": "230804"}, False),
        ({"TERM": "screen-256color", "FORCE_HYPERLINK": "1"}, True),
        ({"TERM": "xterm-kitty", "FORCE_HYPERLINK": "0"}, False),
    ],
)
def test_which_terminals_get_hyperlinks(env: dict[str, str], expected: bool) -> None:
    assert supports_hyperlinks(env) is expected
