"""config.json's `sampling.stop`: what OpenAI's chat completions API takes (a string, or a list
of one to four strings, or null) is read as written and sent as written; anything else is one
line naming the key and the fix, before any request is sent."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.inputs.settings import ConfigError, parse_settings
from seri.pure.inputs.stop_sequences import MOST_STOP_SEQUENCES, stop_problem
from seri.pure.provider.wire import build_request

# Text a provider can be sent: no lone surrogates, at least one character.
sequences = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
good_stops = st.one_of(
    st.none(), sequences, st.lists(sequences, min_size=1, max_size=MOST_STOP_SEQUENCES)
)
not_text = st.one_of(
    st.integers(), st.floats(allow_nan=False), st.booleans(), st.dictionaries(st.text(), st.text())
)


@given(good_stops)
def test_what_openai_takes_is_read_and_sent_as_written(stop: Any) -> None:
    assert stop_problem(stop) is None
    settings = parse_settings({"sampling": {"temperature": 0, "stop": stop}}, {})
    assert settings.sampling["stop"] == stop
    body = build_request("m", (), (), sampling=settings.sampling)
    assert body["stop"] == stop and body["temperature"] == 0


def _refused(stop: Any) -> str:
    with pytest.raises(ConfigError) as refused:
        parse_settings({"sampling": {"stop": stop}}, {})
    said = str(refused.value)
    # One line that names the key and says what to write instead.
    assert "\n" not in said and "'sampling.stop" in said, said
    assert "a list of up to 4 non-empty strings" in said, said
    assert stop_problem(stop) == said
    return said


@given(st.lists(sequences, min_size=MOST_STOP_SEQUENCES + 1, max_size=10))
def test_more_than_four_sequences_are_refused(stop: list[str]) -> None:
    assert f"lists {len(stop)} stop sequences" in _refused(stop)


@given(not_text)
def test_a_value_that_is_no_string_nor_list_is_refused(stop: Any) -> None:
    assert "must be a string or a list of strings" in _refused(stop)


@given(st.lists(sequences, min_size=0, max_size=3), not_text, st.data())
def test_a_list_item_that_is_not_a_string_is_refused_by_its_index(
    before: list[str], bad: Any, data: st.DataObject
) -> None:
    where = data.draw(st.integers(0, len(before)))
    stop = [*before[:where], bad, *before[where:]]
    assert f"'sampling.stop'[{where}] must be a string" in _refused(stop)


@pytest.mark.parametrize(
    ("stop", "said"),
    [
        ([], "lists 0 stop sequences"),
        ("", "is an empty string"),
        (["\n", ""], "'sampling.stop'[1] is an empty string"),
        ("\ud800", "lone surrogate"),
        (["ok", "a\udc00"], "'sampling.stop'[1] holds a lone surrogate"),
    ],
)
def test_values_no_provider_could_use_are_refused(stop: Any, said: str) -> None:
    assert said in _refused(stop)
