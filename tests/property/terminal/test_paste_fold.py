"""Folding a long paste at the prompt: the label always comes back as the whole paste."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.terminal.paste_fold import FOLD_LINES, PasteFold, fold_label, needs_folding, unfold

texts = st.text(st.characters(codec="utf-8"), max_size=300)


@given(st.lists(st.tuples(texts, texts), max_size=5), texts)
def test_unfolding_gives_back_exactly_what_was_typed_and_pasted(
    pieces: list[tuple[str, str]], last: str
) -> None:
    """Typed text around the labels is kept; each label becomes its paste, even a paste
    that holds another paste's label."""
    folds = tuple(
        PasteFold(fold_label(pasted, n), pasted) for n, (_, pasted) in enumerate(pieces, 1)
    )
    typed = [t.replace("[pasted", "[Pasted") for t, _ in pieces]
    shown = "".join(t + f.label for t, f in zip(typed, folds, strict=True)) + last.replace(
        "[pasted", "[Pasted"
    )
    whole = "".join(t + p for t, (_, p) in zip(typed, pieces, strict=True)) + last.replace(
        "[pasted", "[Pasted"
    )
    assert unfold(shown, folds) == whole


@given(st.integers(min_value=1, max_value=500), st.integers(min_value=1, max_value=99))
def test_a_label_says_how_many_lines_were_pasted(lines: int, number: int) -> None:
    text = "\n".join(f"line {i}" for i in range(lines))
    assert needs_folding(text) == (lines > FOLD_LINES)
    if lines > FOLD_LINES:
        assert fold_label(text, number) == f"[pasted {lines} lines #{number}]"


def test_one_long_line_is_folded_by_its_size() -> None:
    assert fold_label("x" * 5000, 3) == "[pasted 5,000 characters #3]"
    assert (
        unfold(
            "see [pasted 5,000 characters #3]", (PasteFold("[pasted 5,000 characters #3]", "x"),)
        )
        == "see x"
    )
