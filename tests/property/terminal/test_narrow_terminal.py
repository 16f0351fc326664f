"""A narrow terminal: long lines broken under their indent, a bottom bar that fits."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.terminal.cell_width import cells, clip
from seri.pure.terminal.chat_status import fit_toolbar
from seri.pure.terminal.terminal_style import wrap_spans

STYLES = st.sampled_from(["", "add", "notice", "bold"])
TEXT = st.text(alphabet="ab cd│+-\n", max_size=200)


@given(st.lists(st.tuples(STYLES, TEXT), max_size=8), st.integers(min_value=20, max_value=120))
def test_wrapping_loses_nothing_and_no_line_is_wider_than_the_terminal(
    spans: list[tuple[str, str]], width: int
) -> None:
    wrapped = wrap_spans(spans, width)
    text = "".join(t for _, t in wrapped)
    assert all(len(line) <= width for line in text.split("\n"))
    original = "".join(t for _, t in spans)
    # Only line breaks and indents were added, in the same order of characters.
    assert text.replace("\n", "").replace(" ", "").replace("│", "") == original.replace(
        "\n", ""
    ).replace(" ", "").replace("│", "")
    assert text.count("\n") >= original.count("\n")


def test_a_diff_line_goes_on_under_its_sign_and_output_under_its_rule() -> None:
    line = "  +" + "x" * 70 + "\n"
    assert "".join(t for _, t in wrap_spans([("add", line)], 40)).split("\n")[1].startswith("   x")
    rule = "  │ " + "y" * 70 + "\n"
    assert (
        "".join(t for _, t in wrap_spans([("notice", rule)], 40)).split("\n")[1].startswith("  │ y")
    )


@given(
    st.text(alphabet="abc/·% 0123456789$", max_size=80), st.integers(min_value=10, max_value=200)
)
def test_the_bottom_bar_always_fits(status: str, width: int) -> None:
    hints = ("Alt-Enter newline", "/help", "Ctrl-D quit")
    bar = fit_toolbar(status, hints, width)
    assert len(bar) <= width
    shown = [hint for hint in hints if hint in bar]
    assert shown == list(hints[len(hints) - len(shown) :])  # the first dropped first
    assert "/he " not in bar and not bar.rstrip().endswith("/he")


def test_at_60_columns_help_and_quit_stay() -> None:
    bar = fit_toolbar(
        "fake/model · 1% of 200k · $0.0000", ("Alt-Enter newline", "/help", "Ctrl-D quit"), 60
    )
    assert bar == " fake/model · 1% of 200k · $0.0000 │ /help · Ctrl-D quit "


# Pieces, so that an accent only ever follows its letter.
WIDE_PIECES = ["a", "b", " ", "漢", "字", "🎉", "e\u0301", "│", "+", "-", "\n"]
WIDE_TEXT = st.lists(st.sampled_from(WIDE_PIECES), max_size=120).map("".join)


@given(st.lists(st.tuples(STYLES, WIDE_TEXT), max_size=8), st.integers(min_value=20, max_value=120))
def test_wide_characters_are_wrapped_by_the_columns_they_take(
    spans: list[tuple[str, str]], width: int
) -> None:
    """A CJK character or an emoji takes two columns, a combining accent none: no row is
    wider than the terminal, nothing is lost, and an accent stays on its letter."""
    wrapped = "".join(t for _, t in wrap_spans(spans, width))
    assert all(cells(line) <= width for line in wrapped.split("\n"))
    original = "".join(t for _, t in spans)

    def content(text: str) -> str:
        return text.replace("\n", "").replace(" ", "").replace("│", "")

    assert content(wrapped) == content(original)
    # A row never starts with an accent torn from its letter.
    assert all(not row.startswith("\u0301") for row in wrapped.split("\n")[1:])


def test_a_wide_diff_line_goes_on_under_its_sign() -> None:
    line = "  +x = '" + "漢字" * 30 + "'\n"
    rows = "".join(t for _, t in wrap_spans([("add", line)], 60)).split("\n")
    assert [cells(row) for row in rows[:-1]] == [60, 59, 16]  # a wide character never split
    assert all(row.startswith("   漢") for row in rows[1:-1])


def test_cells_and_clip_count_columns() -> None:
    assert cells("漢字🎉a") == 7
    assert cells("👨\u200d👩\u200d👧") == 2  # one glyph
    assert cells("e\u0301") == 1
    assert cells("a\x1bb") == 3  # ESC shows as ␛
    assert clip("漢字漢字漢字", 5) == "漢字…"
    assert clip("short", 5) == "short"
