"""Stored events read back as their records: ``events.decode`` is the one way back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.session.records import Usage
from seri.pure.trajectories.event_decoding import Unknown, decode
from seri.pure.trajectories.events import EVENT_TYPES, ModelCall
from seri.pure.trajectories.tool_events import Edit

GOLDEN = Path(__file__).parents[2] / "golden" / "trajectory" / "recorded_run.jsonl"
LINE_KEYS = ("type", "session", "run", "at")
# The golden's placeholders for numbers that vary from run to run.
NUMBERS = {"<started>": 1.5, "<delay>": 0.5, "<seconds>": 0.25}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
type_names = st.sampled_from([kind.type for kind in EVENT_TYPES]) | st.text(max_size=12)


def _stored(line: dict[str, Any]) -> dict[str, Any]:
    return {
        key: NUMBERS.get(value, value) if isinstance(value, str) else value
        for key, value in line.items()
        if key not in LINE_KEYS
    }


def test_every_event_of_a_recorded_run_decodes_to_its_own_record() -> None:
    lines = [json.loads(text) for text in GOLDEN.read_text().splitlines()]
    kinds = {kind.type: kind for kind in EVENT_TYPES}
    for line in lines:
        event = decode(line["type"], _stored(line))
        assert type(event) is kinds[line["type"]], line
        assert event.export() == _stored(line)


@given(type_names, st.dictionaries(st.text(max_size=12), json_values, max_size=6))
def test_any_stored_body_decodes_without_a_crash_and_exports_as_stored(
    type_: str, body: dict[str, Any]
) -> None:
    event = decode(type_, body)
    assert event.export() == body
    if isinstance(event, Unknown):
        assert (event.kind, event.body) == (type_, body)


@given(st.integers(min_value=0), st.integers(min_value=0), st.none() | st.floats(0, 5), st.text())
def test_a_model_call_survives_the_store(inputs: int, outputs: int, cost: Any, reason: str) -> None:
    written = ModelCall(
        finish_reason=reason,
        usage=Usage(input_tokens=inputs, output_tokens=outputs, cost=cost),
        tool_calls=1,
    )
    read = decode(ModelCall.type, json.loads(json.dumps(written.export())))
    assert isinstance(read, ModelCall)
    assert read.usage == written.usage
    assert read.export() == written.export()


def test_an_unreported_usage_reads_back_as_none() -> None:
    read = decode(ModelCall.type, {"finish_reason": "stop", "usage": None, "tool_calls": 0})
    assert isinstance(read, ModelCall) and read.usage is None
    # The form an older seri wrote is not this one's export: kept as it was stored.
    older = {"finish_reason": "stop", "usage": {"reported": False}, "tool_calls": 0}
    assert isinstance(decode(ModelCall.type, older), Unknown)


def test_a_flattened_edit_keeps_its_details_in_order() -> None:
    read = decode(Edit.type, {"tool": "edit", "outcome": "applied", "path": "a.py"})
    assert isinstance(read, Edit)
    assert read.details == (("outcome", "applied"), ("path", "a.py"))


def test_a_type_seri_does_not_know_and_a_short_body_are_unknown() -> None:
    assert isinstance(decode("from_the_future", {"x": 1}), Unknown)
    # An older or hand-written shape: a model call without its tool call count.
    assert isinstance(decode(ModelCall.type, {"finish_reason": "stop", "usage": None}), Unknown)


@given(st.sampled_from(["x", True, None, 1.5, [1], {"n": 1}]))
def test_a_field_of_another_type_makes_the_event_unknown(count: Any) -> None:
    body = {"finish_reason": "stop", "usage": None, "tool_calls": count}
    assert isinstance(decode(ModelCall.type, body), Unknown)
