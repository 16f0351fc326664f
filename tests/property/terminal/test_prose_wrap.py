"""An answer's prose wrapped by words as it streams: no line wider than the terminal, the
words kept in order, the same lines however the stream was cut into pieces."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.terminal.cell_width import cells
from seri.pure.terminal.markdown_stream import MarkdownStream
from seri.pure.terminal.prose_wrap import ProseWrap
from seri.pure.terminal.terminal_style import Span

# Words of ASCII, CJK (two columns each), emoji (two), an accent that combines (none).
_WORD = st.text(alphabet="abcxyz漢字日本🙂🚀é\u0301*`", min_size=1, max_size=30)
_LINK = st.sampled_from(["[the docs](https://example.com/docs)", "[a\tb c](x.py)", "[x](y)"])
_LINE = st.lists(st.one_of(_WORD, _LINK), max_size=12).map(" ".join)
_MARKER = st.sampled_from(["", "", "- ", "* ", "1. ", "12. ", "  - ", "> ", "   "])
PROSE = st.lists(st.tuples(_MARKER, _LINE), max_size=6).map(
    lambda lines: "\n".join(marker + line for marker, line in lines)
)
WIDTHS = st.integers(min_value=10, max_value=120)


def _cut(text: str, cuts: list[int]) -> list[str]:
    points = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    return [text[start:end] for start, end in itertools.pairwise(points)]


def _streamed(text: str, cuts: list[int], width: int, *, links: bool = False) -> list[Span]:
    """``text`` through the chat's path: Markdown spans, then the wrap, piece by piece."""
    markdown, wrap, out = MarkdownStream(hyperlinks=links), ProseWrap(), []
    for piece in _cut(text, cuts):
        out += wrap.feed(markdown.feed(piece), width)
    out += wrap.feed(markdown.finish(), width)
    out += wrap.finish(width)
    return out


def _joined(spans: list[Span]) -> str:
    return "".join(text for _, text in spans)


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for style, text in spans:
        if merged and merged[-1][0] == style:
            merged[-1] = (style, merged[-1][1] + text)
        elif text:
            merged.append((style, text))
    return merged


@given(PROSE, st.lists(st.integers(min_value=0), max_size=8), WIDTHS)
def test_no_line_is_wider_than_the_terminal(text: str, cuts: list[int], width: int) -> None:
    shown = _joined(_streamed(text, cuts, width))
    assert all(cells(line) <= width for line in shown.split("\n"))


@given(PROSE, st.lists(st.integers(min_value=0), max_size=8), WIDTHS)
def test_the_words_are_the_texts_words_in_order(text: str, cuts: list[int], width: int) -> None:
    markdown = MarkdownStream()
    rendered = _joined([*markdown.feed(text), *markdown.finish()])
    shown = _joined(_streamed(text, cuts, width)).replace("│", "")  # a quote's bar, again
    rendered = rendered.replace("│", "")
    # Only line breaks and continuation indents were put in; a word cut by columns is the
    # same characters with a break among them.
    assert "".join(shown.split()) == "".join(rendered.split())
    words = rendered.split()
    if all(cells(word) <= width // 2 for word in words):
        assert shown.split() == words


@given(PROSE, st.lists(st.integers(min_value=0), max_size=8), WIDTHS, st.booleans())
def test_the_lines_do_not_depend_on_how_the_stream_was_cut(
    text: str, cuts: list[int], width: int, links: bool
) -> None:
    whole = _streamed(text, [], width, links=links)
    assert _merged(_streamed(text, cuts, width, links=links)) == _merged(whole)


_PLAIN_WORD = st.text(alphabet="abcxyz漢字🙂", min_size=1, max_size=30)


@given(st.lists(_PLAIN_WORD, min_size=1, max_size=40).map(" ".join), WIDTHS)
def test_a_list_items_continuations_start_under_its_text(line: str, width: int) -> None:
    shown = _joined(_streamed("- " + line + "\n", [], width)).rstrip("\n").split("\n")
    assert shown[0].startswith("• ")
    assert all(row.startswith("  ") and not row[2:3].isspace() for row in shown[1:])


def test_a_paragraph_breaks_between_words_and_a_long_word_by_columns() -> None:
    shown = _joined(_streamed("one two three four five six seven\n", [5, 11], 12))
    assert shown == "one two\nthree four\nfive six\nseven\n"
    assert _joined(_streamed("x" + "漢" * 12 + "\n", [3], 10)) == "x漢漢漢漢\n漢漢漢漢漢\n漢漢漢\n"


def test_code_blocks_and_fences_pass_as_they_are() -> None:
    wrap = ProseWrap()
    code = [("fence", "─── py ──\n"), ("code_block", "y = " + "1 + " * 30 + "\n")]
    assert wrap.feed(code, 20) == code


def test_a_resize_gives_the_new_lines_the_new_width() -> None:
    wrap = ProseWrap()
    wide = wrap.feed([("", "aaa bbb ccc ddd eee fff\n")], 40)
    narrow = wrap.feed([("", "aaa bbb ccc ddd eee fff\n")], 12)
    assert _joined(wide) == "aaa bbb ccc ddd eee fff\n"
    assert _joined(narrow) == "aaa bbb ccc\nddd eee fff\n"


def test_a_links_text_stays_one_span_however_it_was_streamed() -> None:
    """Split over two pieces of the output, a link would be two links to the terminal."""
    markdown, wrap = MarkdownStream(hyperlinks=True), ProseWrap()
    text = "See [the docs](https://example.com/docs), then stop.\n"
    shown = [wrap.feed(markdown.feed(piece), 60) for piece in _cut(text, [1, 9, 20, 40])]
    assert any(("link https://example.com/docs", "the docs") in piece for piece in shown)
