"""A long paste shown as one short label at the prompt, and given back whole when sent.

A paste of more than ``FOLD_LINES`` lines (or ``FOLD_CHARS`` characters) would fill the
screen and bury what is typed around it, so the prompt shows ``[pasted 200 lines #1]``
instead; the label is replaced by the pasted text when the message is sent (or when the
person asks to see it, Ctrl-O), so the model and the history always get the whole paste.
"""

from __future__ import annotations

import re

import attrs

FOLD_LINES = 10
FOLD_CHARS = 2000


@attrs.frozen
class PasteFold:
    label: str
    text: str


def needs_folding(text: str) -> bool:
    return text.count("\n") + 1 > FOLD_LINES or len(text) > FOLD_CHARS


def fold_label(text: str, number: int) -> str:
    lines = text.count("\n") + 1
    if lines > FOLD_LINES:
        return f"[pasted {lines} lines #{number}]"
    return f"[pasted {len(text):,} characters #{number}]"


def unfold(text: str, folds: tuple[PasteFold, ...]) -> str:
    """``text`` with every fold's label replaced by what was pasted, in one pass: a pasted
    text that happens to hold a label is given back as it was pasted."""
    by_label = {fold.label: fold.text for fold in folds}
    if not any(label in text for label in by_label):
        return text
    pattern = "|".join(re.escape(label) for label in sorted(by_label, key=len, reverse=True))
    return re.sub(pattern, lambda match: by_label[match.group(0)], text)
