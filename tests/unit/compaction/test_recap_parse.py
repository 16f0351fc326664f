"""Examples of summarizer answers in the shapes models actually produce."""

from __future__ import annotations

import pytest

from seri.pure.compaction.recap import Recap, merge_recap, recap_from_dict
from seri.pure.compaction.recap_answer import RecapFields, parse_recap_answer
from seri.pure.compaction.recap_paths import paths_touched
from seri.pure.compaction.recap_rendering import render_recap
from seri.pure.session.records import ToolCall, assistant, tool_result, user

EXPECTED = RecapFields(
    goal="Fix the typo in README.md",
    progress=("Read README.md", "Replaced 'smal' with 'small'"),
    blockers=(),
    next_steps=("Run `make test`",),
)


def test_plain_json() -> None:
    """The shape the prompt asks for."""
    text = (
        '{"goal": "Fix the typo in README.md", "progress": ["Read README.md", '
        '"Replaced \'smal\' with \'small\'"], "blockers": [], "next_steps": ["Run `make test`"]}'
    )
    assert parse_recap_answer(text) == EXPECTED


def test_fenced_json_with_prose() -> None:
    """A fenced object with prose around it: the prose becomes notes."""
    text = """Here is the recap.

```json
{
  "Goal": "Fix the typo in README.md",
  "Progress": ["Read README.md", "Replaced 'smal' with 'small'"],
  "Blockers": [],
  "Next steps": ["Run `make test`"]
}
```
Let me know if you need more."""
    assert parse_recap_answer(text) == RecapFields(
        goal=EXPECTED.goal,
        progress=EXPECTED.progress,
        blockers=(),
        next_steps=EXPECTED.next_steps,
        notes=("Here is the recap.", "Let me know if you need more."),
    )


@pytest.mark.parametrize("key", ["next_steps", "Next steps", "nextSteps", "NEXT-STEPS", "next"])
def test_key_spellings(key: str) -> None:
    """Keys match whatever their case, spacing, dashes or underscores."""
    fields = parse_recap_answer(f'{{"{key}": ["a", "b"]}}')
    assert fields.next_steps == ("a", "b")


def test_strings_for_lists_and_lists_for_strings() -> None:
    """A list field given as a string is split into items; a list goal is joined."""
    fields = parse_recap_answer(
        '{"goal": ["Ship", "v2"], "progress": "- one\\n- two", "blockers": "none",'
        ' "next_steps": null}'
    )
    assert fields == RecapFields(
        goal="Ship v2", progress=("one", "two"), blockers=(), next_steps=()
    )


def test_unknown_keys_and_odd_values_become_notes() -> None:
    """Nothing in the object is dropped: unknown keys and non-string items are kept."""
    fields = parse_recap_answer(
        '{"goal": "g", "progress": [{"step": "x", "done": true}, 3], "decisions": ["use attrs"]}'
    )
    assert fields.progress == ('{"step": "x", "done": true}', "3")
    assert fields.notes == ('decisions: ["use attrs"]',)


def test_missing_fields_are_none() -> None:
    """A field the answer does not mention is None, not empty."""
    fields = parse_recap_answer('{"goal": "g"}')
    assert fields == RecapFields(goal="g")


def test_markdown_headings() -> None:
    """## headings with bullets, numbered lists and wrapped lines."""
    text = """## Goal
Fix the typo in README.md

## Progress
- Read README.md
- Replaced 'smal'
  with 'small'

## Blockers
None.

## Next steps
1. Run `make test`
"""
    assert parse_recap_answer(text) == RecapFields(
        goal="Fix the typo in README.md",
        progress=("Read README.md", "Replaced 'smal' with 'small'"),
        blockers=(),
        next_steps=("Run `make test`",),
    )


def test_colon_and_bold_headings() -> None:
    """`Goal:` with the value on the same line, and **bold** headings."""
    text = """Goal: Fix the typo in README.md
**Progress**
* Read README.md
**Blockers:** tests fail in `test_shop.py::test_total`
Next Steps:
- Run `make test`"""
    assert parse_recap_answer(text) == RecapFields(
        goal="Fix the typo in README.md",
        progress=("Read README.md",),
        blockers=("tests fail in `test_shop.py::test_total`",),
        next_steps=("Run `make test`",),
    )


def test_text_outside_fields_becomes_notes() -> None:
    """A preamble and an unknown section are kept as notes."""
    text = """Summary of the session so far.
## Goal
g
## Key decisions
- Use SQLite, not JSON files
"""
    fields = parse_recap_answer(text)
    assert fields.goal == "g"
    assert fields.notes == (
        "Summary of the session so far.",
        "Key decisions",
        "Use SQLite, not JSON files",
    )


def test_a_synonym_inside_a_list_stays_an_item() -> None:
    """`- Blocked: ...` inside progress is an item, not a new section."""
    fields = parse_recap_answer("Progress:\n- Blocked: waiting for review\n- wrote a.py")
    assert fields.progress == ("Blocked: waiting for review", "wrote a.py")
    assert fields.blockers is None


def test_no_structure_at_all() -> None:
    """An answer with no fields keeps every line as a note and leaves the fields unset."""
    fields = parse_recap_answer("I could not summarize.\nSorry.")
    assert fields == RecapFields(notes=("I could not summarize.", "Sorry."))


def test_broken_json_still_yields_fields() -> None:
    """An object with a trailing comma falls back to line reading, which still finds keys."""
    text = '{\n  "goal": "fix it",\n  "progress": [\n    "read a.py",\n  ],\n}'
    fields = parse_recap_answer(text)
    assert fields.goal == "fix it"
    assert fields.progress == ("read a.py",)


def test_merge_updates_a_previous_recap() -> None:
    """Progress accumulates, resolved blockers go, paths merge with modified winning."""
    previous = Recap(
        goal="Fix the typo",
        progress=("Read README.md",),
        blockers=("make test fails",),
        next_steps=("Fix README.md",),
        read_paths=("README.md", "setup.cfg"),
        notes=("an earlier note",),
    )
    answer = parse_recap_answer(
        '{"progress": ["Fixed README.md", "read readme.md"], "blockers": [],'
        ' "next_steps": ["Commit"]} trailing words'
    )
    merged = merge_recap(previous, answer, read=("docs/x.md",), modified=("README.md",))
    assert merged == Recap(
        goal="Fix the typo",
        progress=("Read README.md", "Fixed README.md"),
        blockers=(),
        next_steps=("Commit",),
        read_paths=("setup.cfg", "docs/x.md"),
        modified_paths=("README.md",),
        notes=("an earlier note", "trailing words"),
    )


def test_merge_keeps_blockers_the_answer_does_not_mention() -> None:
    """No blockers field at all means the previous blockers stand."""
    previous = Recap(blockers=("CI is red",))
    assert merge_recap(previous, RecapFields(goal="g"), (), ()).blockers == ("CI is red",)


def test_paths_touched_from_calls() -> None:
    """read_file reads, write_file/edit modify, failed calls and other tools are skipped."""
    calls = (
        ToolCall("1", "read_file", '{"path": "a.py"}'),
        ToolCall("2", "read_file", '{"path": "b.py"}'),
        ToolCall("3", "edit", '{"path": "a.py", "old": "x", "new": "y"}'),
        ToolCall("4", "write_file", '{"path": "missing/c.py", "content": ""}'),
        ToolCall("5", "bash", '{"command": "cat d.py"}'),
        ToolCall("6", "read_file", "not json"),
    )
    messages = [
        user("go"),
        assistant("", calls),
        *(tool_result(c, "ok") for c in calls[:3]),
        tool_result(calls[3], "no such directory", is_error=True),
        *(tool_result(c, "ok") for c in calls[4:]),
    ]
    assert paths_touched(messages) == (("b.py",), ("a.py",))


def test_render_recap() -> None:
    """The recap message: marked as a recap, four headed fields, Read:/Modified:, notes."""
    recap = Recap(
        goal="Fix the typo",
        progress=("Read README.md",),
        next_steps=("Commit",),
        read_paths=("setup.cfg",),
        modified_paths=("README.md", "docs/a b.md"),
        notes=("multi\nline",),
    )
    assert render_recap(recap) == (
        "[Recap of the earlier conversation. Those messages were removed to save context; "
        "this recap stands in for them.]\n\n"
        "## Goal\nFix the typo\n\n"
        "## Progress\n- Read README.md\n\n"
        "## Blockers\n(none)\n\n"
        "## Next steps\n- Commit\n\n"
        "Read:\n- setup.cfg\n"
        # Most recently touched first.
        "Modified:\n- docs/a b.md\n- README.md\n\n"
        "## Notes\n- multi\n  line"
    )


def test_recap_from_dict_rejects_wrong_types() -> None:
    """Stored data of the wrong shape is an error, not a silently empty recap."""
    with pytest.raises(TypeError):
        recap_from_dict({"goal": 3})
    with pytest.raises(TypeError):
        recap_from_dict({"progress": "not a list"})
    assert recap_from_dict({"goal": "g", "future_field": 1}) == Recap(goal="g")
