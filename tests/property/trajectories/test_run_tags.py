"""Run tags (issue 18): how SERI_RUN_TAGS and --tag are read, and that every span of a run
carries its run's tags and no other run's.

* a well-formed KEY=VALUE reads back as itself, from the variable and from --tag alike;
* --tag wins over the variable for the same key; the result is sorted, one value a key;
* anything malformed is refused with the tag and where it came from named;
* every span a run's records make carries exactly that run's header tags as seri.tag.KEY.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seri.pure.session.run_tags import (
    MAX_TAGS,
    TAGS_VARIABLE,
    BadTag,
    parse_tag,
    run_tags,
    tag_attributes,
    tags_from_header,
)
from seri.pure.trajectories.genai_attributes import Content
from seri.pure.trajectories.genai_scopes import TrajectoryRecord
from seri.pure.trajectories.genai_trace import finished_traces
from tests.property.trajectories.test_genai_trace import recorded_runs

KEYS = st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-]{0,20}", fullmatch=True)
# Values as the variable can carry them: printable, no comma, not only spaces.
VALUES = st.text(
    st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters=","),
    min_size=1,
    max_size=40,
).filter(lambda value: value.strip())
TAGS = st.dictionaries(KEYS, VALUES, max_size=8)


def _is_a_key_name(key: str) -> bool:
    return re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\-]*", key) is not None and len(key) <= 64


@given(KEYS, VALUES)
def test_a_well_formed_tag_reads_back_as_itself(key: str, value: str) -> None:
    assert parse_tag(f"{key}={value}", "--tag") == (key, value.strip())
    assert run_tags(f"{key}={value}", ()) == ((key, value.strip()),)
    assert run_tags("", [f"{key}={value}"]) == ((key, value.strip()),)


@settings(max_examples=200, deadline=None)
@given(TAGS, TAGS, st.booleans())
def test_flags_win_over_the_variable_and_the_result_is_sorted(
    from_variable: dict[str, str], from_flags: dict[str, str], trailing_comma: bool
) -> None:
    variable = ",".join(f"{key}={value}" for key, value in from_variable.items())
    variable += "," if trailing_comma else ""
    flags = [f"{key}={value}" for key, value in from_flags.items()]
    merged = {
        **{k: v.strip() for k, v in from_variable.items()},
        **{k: v.strip() for k, v in from_flags.items()},
    }
    assert run_tags(variable, flags) == tuple(sorted(merged.items()))


@given(st.text(max_size=30).filter(lambda text: "=" not in text and text.strip()))
def test_a_tag_without_an_equals_sign_is_refused_by_name(text: str) -> None:
    with pytest.raises(BadTag) as raised:
        run_tags("", [text])
    message = str(raised.value)
    assert repr(text) in message and "--tag" in message and "KEY=VALUE" in message


@given(
    st.text(max_size=20).filter(
        lambda key: (
            "=" not in key and key.strip() and "," not in key and not _is_a_key_name(key.strip())
        )
    ),
    VALUES,
)
def test_a_key_that_is_not_a_name_is_refused(key: str, value: str) -> None:
    with pytest.raises(BadTag, match=TAGS_VARIABLE):
        run_tags(f"{key}={value}", ())


@pytest.mark.parametrize(
    ("tag", "why"),
    [
        ("team=", "has no value"),
        ("=x", "KEY=VALUE"),
        ("team=a\nb", "printable"),
        ("team=a\x1b[31m", "printable"),
        ("k" * 65 + "=x", "at most 64"),
        ("team=" + "v" * 257, "at most 256"),
        ("9lives=x", "start with a letter"),
        ("a b=x", "start with a letter"),
    ],
)
def test_each_kind_of_bad_tag_says_what_is_wrong(tag: str, why: str) -> None:
    with pytest.raises(BadTag, match=why):
        run_tags("", [tag])


def test_too_many_tags_are_refused() -> None:
    flags = [f"k{index}=v" for index in range(MAX_TAGS + 1)]
    with pytest.raises(BadTag, match=f"at most {MAX_TAGS}"):
        run_tags("", flags)
    assert len(run_tags("", flags[:MAX_TAGS])) == MAX_TAGS


def test_a_stored_header_is_read_as_it_is() -> None:
    assert tags_from_header({"b": "2", "a": "1", "9x": "bad", "c": 3, "d": {"elided": True}}) == (
        ("a", "1"),
        ("b", "2"),
    )
    assert tags_from_header(None) == tags_from_header(["a"]) == ()


# As many runs as the trace mapping's own properties draw (each is a whole recorded run).
@settings(max_examples=100, deadline=None)
@given(recorded_runs())
def test_every_span_of_a_run_carries_exactly_its_runs_tags(
    records: list[TrajectoryRecord],
) -> None:
    for run in {record.run for record in records}:
        of_run = [record for record in records if record.run == run]
        header: dict[str, Any] = dict(of_run[0].data)
        expected = dict(tag_attributes(tags_from_header(header.get("tags"))))
        for trace in finished_traces(of_run, Content()):
            for span in trace.spans:
                found = {k: v for k, v in span.attributes if k.startswith("seri.tag.")}
                assert found == expected, span.name


def test_the_chat_reads_the_same_variable_it_names() -> None:
    from seri.runtime.terminal import chat_options

    assert chat_options.TAGS_VARIABLE == TAGS_VARIABLE
    assert chat_options.tags_asked({}, []) == ()
    assert chat_options.tags_asked({TAGS_VARIABLE: " "}, []) == ()
    assert chat_options.tags_asked({TAGS_VARIABLE: "a=1"}, ["b=2"]) == (("a", "1"), ("b", "2"))
