"""What a trajectory event is: a frozen record whose documented fields make its export.

Every record of ``events``, ``tool_events`` and ``history_events`` is an ``Event``: ``field``
declares each field with its ``doc`` (the schema's words), how it is exported and whether its
OpenTelemetry span event carries it; ``export`` is the one dict the store and every exporter
read, and ``redacted`` the same record with a text function applied to every string in it.
A field whose value is ``ABSENT`` is left out of the export: some events have a shorter form
(a tool call refused before it ran, a turn that ended without an error). The export's keys
are the fields' names in their order (``export_name`` where Python's differs, as for ``from``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Literal, Self

import attrs

from seri.pure.session.records import Usage


class _Absent(enum.Enum):
    ABSENT = "absent"

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent.ABSENT
# The type of a field that some forms of an event leave out of its export.
Absent = Literal[_Absent.ABSENT]


# How a field reaches an OpenTelemetry span event (``seri.<type>.<field>``): as it is, or
# as content (only with the opt-in, redacted and elided). A field with neither is not sent.
Telemetry = Literal["", "plain", "content"]


def field(
    doc: str,
    *,
    export_name: str = "",
    optional: bool = False,
    line_key: bool = False,
    telemetry: Telemetry = "",
) -> Any:
    """A documented field; ``optional`` ones default to ``ABSENT`` (left out of the export).

    A ``line_key`` field is one of the keys every exported line starts with (``session``,
    ``run``): the header carries it for those who watch a run live, and the export writes
    it in front of the body, so ``export()`` leaves it out. ``telemetry`` says whether the
    field is an attribute of the span event the record becomes (see ``Telemetry``).
    """
    metadata = {
        "doc": doc,
        "export_name": export_name,
        "line_key": line_key,
        "telemetry": telemetry,
    }
    if optional:
        return attrs.field(default=ABSENT, metadata=metadata)
    return attrs.field(metadata=metadata)


def usage_record(usage: Usage | None) -> dict[str, Any]:
    """A call's usage as events hold it; ``{"reported": false}`` when the provider said none."""
    if usage is None:
        return {"reported": False}
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_tokens": usage.cached_tokens,
        "cache_write_tokens": usage.cache_write_tokens,
        "cost": usage.cost,
        "upstream_cost": usage.upstream_cost,
        "provider": usage.provider or None,
    }


@attrs.frozen
class Event:
    """A trajectory record. Subclasses set ``type`` and declare their fields with ``field``."""

    type: ClassVar[str]

    def export(self) -> dict[str, Any]:
        """The record as stored and exported: its fields in order, the absent ones left out."""
        out: dict[str, Any] = {}
        for item in attrs.fields(type(self)):
            value = getattr(self, item.name)
            if value is ABSENT or item.metadata.get("line_key"):
                continue
            if item.metadata.get("flatten"):
                out.update((key, _plain(part)) for key, part in value)
                continue
            out[item.metadata.get("export_name") or item.name] = _plain(value)
        return out

    def redacted(self, text: Callable[[str], str]) -> Self:
        """The same event with ``text`` applied to every string it holds (keys included)."""
        changes = {
            item.name: _each_string(getattr(self, item.name), text)
            for item in attrs.fields(type(self))
        }
        return attrs.evolve(self, **changes)


def _each_string(value: Any, text: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, tuple):
        return tuple(_each_string(item, text) for item in value)
    if isinstance(value, Mapping):
        return {text(str(key)): _each_string(item, text) for key, item in value.items()}
    if attrs.has(type(value)):  # a record inside the event, as a call's Usage
        fields = attrs.fields(type(value))
        return attrs.evolve(
            value, **{f.name: _each_string(getattr(value, f.name), text) for f in fields}
        )
    return value


def _plain(value: object) -> object:
    if isinstance(value, Usage):
        return usage_record(value)
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    return value
