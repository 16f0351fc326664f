"""Hypothesis strategies the MCP property tests share: text and JSON values of any shape."""

from __future__ import annotations

from hypothesis import strategies as st

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=30)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
