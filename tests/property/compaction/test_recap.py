"""Properties of the recap: path lists, merging, parsing without loss, elision."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.compaction.recap import Recap, merge_recap, recap_from_dict, recap_to_dict
from seri.pure.compaction.recap_answer import (
    _EMPTY_ITEMS,
    _FIELDS,
    _NOTE_HEADINGS,
    RecapFields,
    _key,
    parse_recap_answer,
)
from seri.pure.compaction.recap_paths import TouchedPaths, merge_paths, paths_touched
from seri.pure.compaction.recap_rendering import render_recap
from seri.pure.compaction.summarizer_request import elide_payloads, elided_marker
from seri.pure.session.records import Message, ToolCall, assistant, tool_result, user
from tests.property.strategies import file_tool_histories, path_names

# --- paths -----------------------------------------------------------------------------------

path_lists = st.lists(path_names, max_size=6).map(tuple)
touched = st.builds(TouchedPaths, read=path_lists, modified=path_lists)


@given(touched, touched)
def test_merge_paths_is_a_union_where_modified_wins(a: TouchedPaths, b: TouchedPaths) -> None:
    """Every path survives, modified paths are never listed as read, nothing repeats."""
    merged = merge_paths(a, b)
    assert set(merged.read) | set(merged.modified) == set(a.read + a.modified + b.read + b.modified)
    assert set(merged.modified) == set(a.modified + b.modified)
    assert not set(merged.read) & set(merged.modified)
    assert len(set(merged.read)) == len(merged.read)
    assert len(set(merged.modified)) == len(merged.modified)


@given(touched, touched, touched)
def test_merge_paths_is_idempotent_and_associative(
    a: TouchedPaths, b: TouchedPaths, c: TouchedPaths
) -> None:
    """Merging again changes nothing, and grouping does not matter (order included)."""
    ab = merge_paths(a, b)
    assert merge_paths(ab, b) == ab
    assert merge_paths(ab, ab) == ab
    assert merge_paths(ab, c) == merge_paths(a, merge_paths(b, c))


def by_last_touch(paths: tuple[str, ...]) -> tuple[str, ...]:
    """Each path once, ordered by its last occurrence."""
    last = {p: i for i, p in enumerate(paths)}
    return tuple(sorted(last, key=last.__getitem__))


@given(touched, touched)
def test_merge_paths_orders_by_most_recent_touch(a: TouchedPaths, b: TouchedPaths) -> None:
    """Lists are in order of each path's last touch, old before new: a path touched again
    moves to the end (the recap shows the end first)."""
    merged = merge_paths(a, b)
    assert merged.modified == by_last_touch(a.modified + b.modified)
    written = set(merged.modified)
    assert merged.read == tuple(p for p in by_last_touch(a.read + b.read) if p not in written)


@given(file_tool_histories())
def test_paths_touched_follows_the_calls(messages: list[Message]) -> None:
    """read_file reads, write_file and edit modify, and both means modified only."""
    calls = [c for m in messages for c in m.tool_calls]
    written = {json.loads(c.arguments)["path"] for c in calls if c.name in ("write_file", "edit")}
    read = {json.loads(c.arguments)["path"] for c in calls if c.name == "read_file"}
    result = paths_touched(messages)
    assert set(result.modified) == written
    assert set(result.read) == read - written


# --- merging recaps --------------------------------------------------------------------------

items = st.lists(st.text(min_size=1, max_size=20), max_size=5).map(tuple)
optional_items = st.none() | items
recaps = st.builds(
    Recap,
    goal=st.text(max_size=20),
    progress=items,
    blockers=items,
    next_steps=items,
    read_paths=path_lists,
    modified_paths=path_lists,
    notes=items,
)
answers = st.builds(
    RecapFields,
    goal=st.none() | st.text(max_size=20),
    progress=optional_items,
    blockers=optional_items,
    next_steps=optional_items,
    notes=items,
)


def loose(text: str) -> str:
    return " ".join(text.split()).casefold()


@given(st.none() | recaps, answers, path_lists, path_lists)
def test_merge_never_loses_progress_or_notes(
    previous: Recap | None, answer: RecapFields, read: tuple[str, ...], modified: tuple[str, ...]
) -> None:
    """Previous progress and notes, and the answer's new ones, all survive a merge."""
    merged = merge_recap(previous, answer, read, modified)
    before = previous or Recap()
    kept = {loose(p) for p in merged.progress}
    assert {loose(p) for p in (*before.progress, *(answer.progress or ()))} - {""} <= kept
    assert {loose(n) for n in (*before.notes, *answer.notes)} - {""} <= {
        loose(n) for n in merged.notes
    }
    assert set(merged.modified_paths) == set(before.modified_paths + modified)


@given(recaps, answers)
def test_merge_takes_the_answer_where_it_speaks(previous: Recap, answer: RecapFields) -> None:
    """Blockers and next steps come from the answer when it has them, else stay."""
    merged = merge_recap(previous, answer, (), ())
    blockers = answer.blockers if answer.blockers is not None else previous.blockers
    assert {loose(b) for b in merged.blockers} == {loose(b) for b in blockers} - {""}
    steps = answer.next_steps if answer.next_steps is not None else previous.next_steps
    assert {loose(s) for s in merged.next_steps} == {loose(s) for s in steps} - {""}
    assert merged.goal == (answer.goal or previous.goal)


@given(recaps)
def test_recap_dict_round_trip(recap: Recap) -> None:
    """The plain-data form loads back to the same recap, through JSON too."""
    assert recap_from_dict(json.loads(json.dumps(recap_to_dict(recap)))) == recap


# --- parsing never drops text ----------------------------------------------------------------

_RESERVED = set(_FIELDS) | _NOTE_HEADINGS | _EMPTY_ITEMS
plain_words = st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True).filter(
    lambda w: _key(w) not in _RESERVED
)
markup = st.sampled_from(["", "- ", "* ", "1. ", "## ", "**", "> ", "  "])
headings = st.sampled_from(
    [
        "## Goal",
        "Goal:",
        "**Progress**",
        "Progress:",
        "### Blockers",
        "Blockers:",
        "Next steps:",
        "**Next steps:**",
        "nextSteps:",
        "## Notes",
        "## Something else",
    ]
)


@st.composite
def answers_text(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(min_value=0, max_value=15))):
        choice = draw(st.integers(min_value=0, max_value=4))
        if choice == 0:
            lines.append(draw(headings))
        elif choice == 1:
            lines.append("")
        else:
            words = draw(
                st.lists(plain_words, min_size=1, max_size=5).filter(
                    lambda ws: _key("".join(ws)) not in _RESERVED
                )
            )
            lines.append(draw(markup) + " ".join(words))
    return "\n".join(lines)


def words_of(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.casefold()))


def parsed_text(fields: RecapFields) -> str:
    parts = [fields.goal or "", *fields.notes]
    for group in (fields.progress, fields.blockers, fields.next_steps):
        parts.extend(group or ())
    return "\n".join(parts)


@settings(max_examples=300)
@given(answers_text())
def test_parse_keeps_every_word(text: str) -> None:
    """Every word of a headed answer lands in some field, save the heading names."""
    heading_words = words_of("goal progress blockers next steps nextsteps notes")
    # List numbers ("1. ") are markup, like bullets.
    content = re.sub(r"(?m)^\s*\d{1,3}[.)]\s+", "", text)
    assert words_of(content) - heading_words <= words_of(parsed_text(parse_recap_answer(text)))


@st.composite
def item_lines(draw: st.DrawFn) -> list[str]:
    line = st.lists(plain_words, min_size=1, max_size=4).filter(
        lambda ws: _key("".join(ws)) not in _RESERVED
    )
    return [" ".join(draw(line)) for _ in range(draw(st.integers(min_value=0, max_value=6)))]


@settings(max_examples=300)
@given(item_lines(), st.lists(st.sampled_from(["Goal:", "## Progress", "- ", "", "Next steps:"])))
def test_parse_keeps_every_content_line(lines: list[str], heads: list[str]) -> None:
    """Every non-blank content line appears whole in some parsed field."""
    text_lines = []
    for i, line in enumerate(lines):
        head = heads[i] if i < len(heads) else ""
        text_lines.append(f"{head}\n- {line}" if head not in ("- ", "") else f"{head}{line}")
    fields = parse_recap_answer("\n".join(text_lines))
    everything = parsed_text(fields)
    for line in lines:
        assert line in everything


@given(st.lists(plain_words, min_size=1, max_size=8), st.text(max_size=40))
def test_prose_around_json_is_kept(words: list[str], prose: str) -> None:
    """Prose before and after a JSON answer becomes notes, word for word."""
    # Braces could open a second object; fence marks are markup, not text.
    prose = prose.translate(str.maketrans("{}`~", "()''"))
    answer = json.dumps({"goal": " ".join(words), "progress": words})
    fields = parse_recap_answer(f"{prose}\n```json\n{answer}\n```\n{prose}")
    assert fields.goal == " ".join(words)
    assert words_of(prose) <= words_of("\n".join(fields.notes))


@given(
    st.builds(
        Recap,
        goal=st.lists(plain_words, min_size=1, max_size=4).map(" ".join),
        progress=st.lists(plain_words, max_size=4).map(tuple),
        blockers=st.lists(plain_words, max_size=4).map(tuple),
        next_steps=st.lists(plain_words, max_size=4).map(tuple),
    )
)
def test_render_then_parse_recovers_the_fields(recap: Recap) -> None:
    """A rendered recap read back as an answer gives the same four fields."""
    fields = parse_recap_answer(render_recap(recap))
    assert fields.goal == recap.goal
    assert fields.progress == recap.progress
    assert fields.blockers == recap.blockers
    assert fields.next_steps == recap.next_steps


# --- elision ---------------------------------------------------------------------------------

payloads = st.text(alphabet=st.sampled_from('aé€😀{}"\\ \n'), max_size=40)


@given(payloads, st.integers(min_value=0, max_value=160))
def test_elision_threshold_is_exact(payload: str, limit: int) -> None:
    """A payload over the limit in UTF-8 bytes is replaced; at or under it, kept as is."""
    call = ToolCall("c1", "write_file", payload)
    messages = (assistant("text stays", (call,)), tool_result(call, payload), user(payload))
    size = len(payload.encode("utf-8"))
    elided = elide_payloads(messages, limit)
    expected = elided_marker(size) if size > limit else payload
    assert elided[0].tool_calls[0].arguments == expected
    assert elided[1].text == expected
    assert elided[0].text == "text stays"
    assert elided[2] == messages[2]
    if size > limit:
        assert json.loads(expected) == {"elided": True, "originalBytes": size}
