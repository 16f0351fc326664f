"""The trajectory's records (seri/pure/trajectories/events.py): whatever their values, an event's
export is JSON with exactly its documented keys in their order, and a redacted event holds no
secret.

Every record is drawn field by field from its declared type, so a new event type is covered
here the moment it is added to ``EVENT_TYPES``.
"""

from __future__ import annotations

import json
from typing import Any

import attrs
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.session.records import Usage
from seri.pure.trajectories import (
    event_record,
    events,
    history_events,
    tool_events,
    trajectory_schema,
)
from seri.pure.trajectories.redaction import Redactor

SECRET = "sk-or-v1-" + "5e" * 20
TEXT = st.text(max_size=12) | st.sampled_from(("", SECRET, f"key={SECRET}!", "type"))
NUMBER = st.floats(allow_nan=False, allow_infinity=False, width=32)
SCALAR = TEXT | st.integers(-(2**40), 2**40) | NUMBER | st.booleans() | st.none()
USAGE = st.builds(
    Usage,
    input_tokens=st.integers(0, 10**7),
    output_tokens=st.integers(0, 10**6),
    cost=st.none() | NUMBER,
    provider=TEXT,
)
# The types the records declare, by their annotation text (``| Absent`` and ``| None``
# are alternatives added below).
BY_ANNOTATION: dict[str, st.SearchStrategy[Any]] = {
    "str": TEXT,
    "int": st.integers(-(2**40), 2**40),
    "float": NUMBER,
    "bool": st.booleans(),
    "Usage": USAGE,
    "Mapping[str, Any]": st.dictionaries(TEXT, SCALAR, max_size=3),
    "Mapping[str, str]": st.dictionaries(TEXT, TEXT, max_size=3),
    "tuple[str, ...]": st.lists(TEXT, max_size=3).map(tuple),
    "tuple[tuple[str, object], ...]": st.lists(st.tuples(TEXT, SCALAR), max_size=4).map(tuple),
}


def value_of(annotation: str) -> st.SearchStrategy[Any]:
    choices = []
    for part in annotation.split(" | "):
        if part == "Absent":
            choices.append(st.just(event_record.ABSENT))
        elif part == "None":
            choices.append(st.none())
        else:
            assert part in BY_ANNOTATION, f"no strategy for the field type {part!r}"
            choices.append(BY_ANNOTATION[part])
    return st.one_of(*choices)


def record_of(kind: type[event_record.Event]) -> st.SearchStrategy[event_record.Event]:
    fields = {item.name: value_of(str(item.type)) for item in attrs.fields(kind)}
    return st.fixed_dictionaries(fields).map(lambda values: kind(**values))


ANY_EVENT = st.sampled_from(events.EVENT_TYPES).flatmap(record_of)


def expected_keys(event: event_record.Event) -> list[str]:
    keys: list[str] = []
    for item in attrs.fields(type(event)):
        value = getattr(event, item.name)
        if value is event_record.ABSENT or item.metadata.get("line_key"):
            continue
        if item.metadata.get("flatten"):
            keys += [key for key, _ in value]
        else:
            keys.append(item.metadata.get("export_name") or item.name)
    return keys


@given(ANY_EVENT)
def test_an_export_is_json_with_its_documented_keys_in_order(event: event_record.Event) -> None:
    exported = event.export()
    # Flattened pairs may repeat a key; a dict keeps one.
    assert list(exported) == list(dict.fromkeys(expected_keys(event)))
    assert json.loads(json.dumps(exported)) == exported
    documented = {
        field["name"]
        for entry in trajectory_schema.event_schema()["events"]
        if entry["type"] == event.type
        for field in entry["fields"]
    }
    if not isinstance(event, tool_events.Edit):
        assert set(exported) <= documented


@given(ANY_EVENT)
def test_a_redacted_event_holds_no_secret(event: event_record.Event) -> None:
    redacted = event.redacted(Redactor.of([SECRET]).text)
    assert SECRET not in json.dumps(redacted.export())
    assert type(redacted) is type(event)
    if SECRET not in repr(event):
        assert redacted == event


def test_every_record_of_the_modules_is_listed() -> None:
    """A record left out of ``EVENT_TYPES`` would be recorded, yet missing from the schema
    file, the README's table and the properties above."""
    declared = {
        value
        for module in (events, tool_events, history_events)
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, event_record.Event)
        and value.__module__ == module.__name__
    }
    assert declared == set(events.EVENT_TYPES)


def test_every_type_is_named_once_and_every_field_documented() -> None:
    types = [kind.type for kind in events.EVENT_TYPES]
    assert len(types) == len(set(types))
    for entry in trajectory_schema.event_schema()["events"]:
        assert entry["about"], entry["type"]
        assert all(field["doc"] for field in entry["fields"]), entry["type"]
