"""Every JSON Lines output of seri is one value a line for any reader of lines, Python's
``str.splitlines()`` included (seri.pure.trajectories.json_lines)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.trajectories.json_lines import json_line, line_safe, line_safe_bytes

# Every character str.splitlines() breaks at, among ordinary ones.
BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
texts = st.text(alphabet=st.sampled_from(BREAKS + 'ab é😀"\\'), max_size=40) | st.text(max_size=20)
values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | texts,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(texts, children, max_size=4),
    max_leaves=20,
)


@given(values, st.booleans())
def test_a_json_line_is_one_line_to_splitlines(value: Any, compact: bool) -> None:
    line = json_line(value, compact=compact)
    assert line.endswith("\n")
    (only,) = line.splitlines()
    assert json.loads(only) == value
    assert line.encode("utf-8").splitlines() == [only.encode("utf-8")]


@given(st.lists(values, max_size=6))
def test_lines_made_elsewhere_are_made_safe_alike(batch: list[Any]) -> None:
    """The lines SQLite builds (exports) are escaped as text or as bytes, to the same."""
    raw = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in batch)
    safe = line_safe(raw)
    assert line_safe_bytes(raw.encode("utf-8")) == safe.encode("utf-8")
    assert [json.loads(line) for line in safe.splitlines()] == batch
