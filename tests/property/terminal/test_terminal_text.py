"""What reaches the terminal: the neutraliser, the streamed Markdown, the painted styles."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.terminal.markdown_stream import MarkdownStream, render_markdown
from seri.pure.terminal.terminal_style import SGR, paint
from seri.pure.terminal.terminal_text import is_inert, neutralise, one_line
from tests.property.provider.test_sse import split

# Everything, controls and surrogates included: text from a model or a file can hold it.
ANY_TEXT = st.text(alphabet=st.characters(codec=None), max_size=200)
CONTROLS = st.sampled_from(
    [
        "\x1b[2J",
        "\x1b]0;t\x07",
        "\x1b]52;c;aGk=\x07",
        "\x9b2J",
        "\r",
        "\b",
        "\x07",
        "\u202e",
        "\x1bP+q\x1b\\",
        "\x00",
        "\x7f",
        "\ud800",
    ]
)
HOSTILE = st.lists(st.one_of(ANY_TEXT, CONTROLS), max_size=12).map("".join)
MARKDOWN = st.lists(
    st.sampled_from(
        [
            "# ",
            "## ",
            "- ",
            "* ",
            "1. ",
            "> ",
            "```",
            "```py",
            "~~~",
            "`",
            "**",
            "*",
            "\n",
            "text",
            " ",
            "word",
            "\x1b[31m",
            "\t",
            "__",
        ]
    ),
    max_size=40,
).map("".join)

# What only a terminal acts on: C0 controls but tab and newline, DEL, C1, bidi controls.
_ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@given(HOSTILE)
def test_neutralised_text_holds_nothing_a_terminal_acts_on(text: str) -> None:
    safe = neutralise(text)
    assert not _ACTIVE.search(safe)
    assert is_inert(safe)
    assert neutralise(safe) == safe  # a second pass changes nothing


@given(HOSTILE, st.lists(st.integers(0, 200), max_size=6))
def test_neutralising_chunks_equals_neutralising_the_whole(text: str, cuts: list[int]) -> None:
    assert "".join(neutralise(piece) for piece in split(text, cuts)) == neutralise(text)


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200))
def test_ascii_text_comes_out_as_any_other_text_would(text: str) -> None:
    # ASCII text takes a quicker path; one letter beyond ASCII sends it down the general one.
    assert neutralise(text) + "é" == neutralise(text + "é")
    assert not _ACTIVE.search(neutralise(text))


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cc", "Cs"])))
def test_ordinary_text_is_left_as_it_is(text: str) -> None:
    plain = "".join(ch for ch in text if not _ACTIVE.match(ch))
    assert neutralise(plain) == plain


@given(HOSTILE, st.sampled_from(sorted(SGR)), st.booleans())
def test_the_only_escapes_painted_are_seris_own(text: str, style: str, colour: bool) -> None:
    painted = paint(text, style, colour=colour)
    own = re.sub(r"\x1b\[[0-9;]*m", "", painted)
    assert not _ACTIVE.search(own)
    if not colour:
        assert painted == neutralise(text)


@settings(max_examples=300)
@given(MARKDOWN, st.lists(st.integers(0, 300), max_size=8))
def test_markdown_comes_out_the_same_however_it_is_streamed(text: str, cuts: list[int]) -> None:
    stream = MarkdownStream()
    spans = [span for piece in split(text, cuts) for span in stream.feed(piece)]
    spans += stream.finish()
    assert _styled_chars(spans) == _styled_chars(render_markdown(text))


def _styled_chars(spans: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each character with its style: spans cut in different places compare equal."""
    return [(style, char) for style, text in spans for char in text]


@given(MARKDOWN)
def test_markdown_keeps_every_letter_and_digit_in_order(text: str) -> None:
    shown = "".join(piece for _, piece in render_markdown(text))
    assert [c for c in shown if c.isalnum()] == [c for c in text if c.isalnum()]


@given(MARKDOWN)
def test_markdown_keeps_the_lines(text: str) -> None:
    shown = "".join(piece for _, piece in render_markdown(text))
    assert shown.count("\n") == text.count("\n")


def test_markdown_renders_headings_lists_code_and_spans() -> None:
    spans = render_markdown("## Plan\n- **one** and `two`\n```sh\nls -l # *x*\n```\n")
    assert spans == [
        ("heading", "Plan"),
        ("", "\n"),
        ("bullet", "• "),
        ("bold", "one"),
        ("", " and "),
        ("code", "two"),
        ("", "\n"),
        ("fence", "─── sh ─────────────────\n"),
        ("code_block", "ls -l # *x*"),
        ("", "\n"),
        ("fence", "────────────────────────\n"),
    ]


def test_the_neutraliser_shows_what_it_stopped() -> None:
    assert neutralise("a\x1b[2Jb\x07c\r\nd\x9be\u202ef\ud800") == "a␛[2Jb␇c\nd\\x9be<U+202E>f\ufffd"


@given(HOSTILE)
def test_one_line_is_inert_stays_on_its_line_and_keeps_the_text(text: str) -> None:
    """What is shown where one line is expected (a table cell, a name, a pin) cannot start a
    line of its own (forge a row), and hides nothing: every newline shows as ␤."""
    shown = one_line(text)
    assert "\n" not in shown and "\t" not in shown and is_inert(shown)
    assert shown.count("\u2424") == text.count("\n") + text.count("\u2424")
    assert one_line(shown) == shown
