"""The check made before a person is asked about an edit agrees with the edit tool.

An edit the file's text already refuses is answered with the tool's own error without
asking (issue 26); that is only honest if the check and the tool never disagree: whenever
the check refuses, the tool (run on a real file) refuses in the same words and leaves the
file as it was, and whenever the tool refuses for a reason in the text, the check does too.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from seri.io.tools.tools import ToolContext, run_tool
from seri.pure.tools.edit_match import edit_failure, plan_edit

# Few letters, so that old_string is often in the file, once or many times.
TEXT = st.text(alphabet="ab \n\r", max_size=40)
DECIDED_BY_TEXT = {"not_found", "ambiguous", "unchanged"}


@given(TEXT, TEXT, TEXT, st.booleans())
def test_the_check_refuses_exactly_when_the_tool_does_and_in_its_words(
    original: str, old: str, new: str, replace_all: bool
) -> None:
    refused = edit_failure(plan_edit(original, old, new, replace_all=replace_all), "m.txt")
    with tempfile.TemporaryDirectory() as workspace:
        root = Path(workspace)
        (root / "m.txt").write_bytes(original.encode())
        arguments = {"path": "m.txt", "old_string": old, "new_string": new}
        result = run_tool("edit", {**arguments, "replace_all": replace_all}, ToolContext(root))
        after = (root / "m.txt").read_bytes()
    outcome = result.detail("outcome")
    if refused is not None:
        assert result.is_error and result.text == refused
        assert after == original.encode()
    assert (outcome in DECIDED_BY_TEXT) == (refused is not None)


def test_what_only_the_write_decides_is_left_to_the_tool() -> None:
    applied = plan_edit("a b", "a", "c")
    too_large = plan_edit("a", "a", "bbbb", cap=2)
    assert applied.outcome == "applied" and edit_failure(applied, "m") is None
    assert too_large.outcome == "too_large" and edit_failure(too_large, "m") is None
