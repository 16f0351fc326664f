"""Reading a stored event back: the record of its type, or ``Unknown``.

The store keeps an event as its type and the JSON of its export; ``decode`` gives the record
again, its fields of their types, so that exporters match on records and an exporter that
echoes a body stays exact. A type a newer seri wrote, or a body that is not its type's shape,
comes back as ``Unknown`` holding both as stored.
"""

from __future__ import annotations

import collections.abc
import functools
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from seri.pure.session.records import Usage
from seri.pure.trajectories.event_record import ABSENT, Event, field, usage_record
from seri.pure.trajectories.events import EVENTS_BY_TYPE


@functools.cache
def _field_types(type_: str) -> Mapping[str, Any]:
    """The fields' types as objects (they are text here), what ``decode`` checks: resolved
    on the first read, so that a run which reads no stored event does not pay for it."""
    return typing.get_type_hints(EVENTS_BY_TYPE[type_])


@attrs.frozen(kw_only=True)
class Unknown(Event):
    """A stored event no record here reads: a type a newer seri wrote, or a body that is not
    the shape of its type (written by hand, or by an older seri). It keeps both as stored."""

    type: ClassVar[str] = ""

    kind: str = field("the type it was stored under")
    body: Mapping[str, Any] = field("its fields as stored")

    def export(self) -> dict[str, Any]:
        return dict(self.body)


def decode(type_: str, body: Mapping[str, Any]) -> Event:
    """A stored event as its record, or ``Unknown`` when its type or shape is not one seri
    knows. The one way back from the store: a decoded record's fields are of their types and
    its export is the stored body again, so an exporter that echoes a body stays exact."""
    kind = EVENTS_BY_TYPE.get(type_)
    if kind is None:
        return Unknown(kind=type_, body=body)
    try:
        event = _build(kind, body)
    except TypeError:
        return Unknown(kind=type_, body=body)
    if event.export() != {k: v for k, v in body.items() if not _is_line_key(kind, k)}:
        return Unknown(kind=type_, body=body)
    return event


def _build(kind: type[Event], body: Mapping[str, Any]) -> Event:
    """The record of a stored body; ``TypeError`` when a field is missing, foreign or of
    another type."""
    values: dict[str, Any] = {}
    field_types = _field_types(kind.type)
    rest = dict(body)
    flattened = ""
    for item in attrs.fields(kind):
        if item.metadata.get("flatten"):
            flattened = item.name
            continue
        name = item.metadata.get("export_name") or item.name
        if name in rest:
            values[item.name] = _stored_value(rest.pop(name), field_types[item.name])
        elif item.metadata.get("line_key"):
            values[item.name] = ""
        elif item.default is not ABSENT:
            raise TypeError(f"{kind.type} without {name}")
    if flattened:
        values[flattened] = tuple(rest.items())
    elif rest:
        raise TypeError(f"{kind.type} with {', '.join(rest)}")
    return kind(**values)


def _is_line_key(kind: type[Event], name: str) -> bool:
    return any(item.name == name and item.metadata.get("line_key") for item in attrs.fields(kind))


def _stored_value(value: Any, annotation: Any) -> Any:
    """A JSON value as the record holds it (arrays as tuples, a call's usage as ``Usage``);
    ``TypeError`` when it is not of the field's type."""
    if isinstance(value, list):
        value = tuple(value)
    if isinstance(value, Mapping) and Usage in _choices(annotation):
        value = _usage_of(value)
    if not _is_a(value, annotation):
        raise TypeError(value)
    return value


def _choices(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        return typing.get_args(annotation)
    return (annotation,)


def _is_a(value: Any, annotation: Any) -> bool:
    """Whether a decoded value is of a field's type (as far as a record's fields go)."""
    for choice in _choices(annotation):
        origin = typing.get_origin(choice) or choice
        if choice is Any or choice is object:
            return True
        if choice is None or choice is type(None):
            if value is None:
                return True
        elif origin is Literal:
            if value in typing.get_args(choice):
                return True
        elif origin is tuple:
            if isinstance(value, tuple):
                return True
        elif origin is Mapping or origin is collections.abc.Mapping:
            if isinstance(value, Mapping):
                return True
        elif choice is float:
            if isinstance(value, int | float) and not isinstance(value, bool):
                return True
        elif choice is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return True
        elif isinstance(origin, type) and isinstance(value, origin):
            return True
    return False


_USAGE_KEYS = tuple(usage_record(Usage()))


def _usage_of(stored: Mapping[str, Any]) -> Usage:
    if tuple(stored) != _USAGE_KEYS:
        raise TypeError(stored)  # not a usage this seri writes
    values = {key: stored[key] for key in _USAGE_KEYS}
    values["provider"] = values["provider"] or ""
    return Usage(**values)
