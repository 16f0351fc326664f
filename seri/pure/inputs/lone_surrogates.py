"""Lone UTF-16 surrogates: text Python can hold but UTF-8 (a database, a provider) cannot.

They arrive from JSON escapes (``"\\ud800"``) in an older release's files, a model's stream or
a tool's output. Each writer that must hand on valid text replaces them here, the one way.
"""

from __future__ import annotations


def replace_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD; a pair of halves becomes the one
    character it encodes. The very same object when there was nothing to replace."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
