"""The trajectory export schema as data, and the README's table made from it.

The line keys every exported line starts with, then each event type of ``events.EVENT_TYPES``
with its documented fields: ``tests/golden/trajectory_schema.json`` and the README's schema
table are made from ``event_schema``, and a test fails when either drifts from the records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.trajectories.event_record import ABSENT
from seri.pure.trajectories.events import EVENT_TYPES

# --- the schema ---------------------------------------------------------------------------------

# The keys every exported line starts with, before the event's own fields.
LINE_KEYS: tuple[tuple[str, str], ...] = (
    ("type", "`header` or one of the event types below"),
    ("session", "the session the run wrote"),
    ("run", "the run's id"),
    ("at", "when it happened, in ISO 8601 UTC with milliseconds"),
)


def event_schema() -> dict[str, Any]:
    """The line keys and every event type with its fields, as data: the golden schema file
    and the README's table are made from this."""
    return {
        "line_keys": [{"name": name, "doc": doc} for name, doc in LINE_KEYS],
        "events": [
            {
                "type": kind.type,
                "about": " ".join((kind.__doc__ or "").split()),
                "fields": [
                    _field_schema(item)
                    for item in attrs.fields(kind)
                    if not item.metadata.get("line_key")
                ],
            }
            for kind in EVENT_TYPES
        ],
    }


def _field_schema(item: attrs.Attribute[Any]) -> dict[str, Any]:
    if item.metadata.get("flatten"):
        # Its pairs are the event's own keys: the doc names them.
        return {"name": "", "type": "object", "optional": False, "doc": item.metadata["doc"]}
    return {
        "name": item.metadata.get("export_name") or item.name,
        "type": str(item.type).replace(" | Absent", ""),
        "optional": item.default is ABSENT,
        "doc": item.metadata["doc"],
    }


def schema_table(schema: Mapping[str, Any] | None = None) -> str:
    """The README's table: the line keys, then a row per type with its fields."""
    schema = schema or event_schema()
    keys = " · ".join(f"`{key['name']}`: {key['doc']}" for key in schema["line_keys"])
    rows = [
        f"Every line starts with the same keys, then the event's own fields: {keys}.",
        "",
        "| type | what it records | fields |",
        "| --- | --- | --- |",
    ]
    for entry in schema["events"]:
        fields = " · ".join(_field_cell(f) for f in entry["fields"])
        rows.append(f"| `{entry['type']}` | {entry['about']} | {fields} |")
    return "\n".join(rows) + "\n"


def _field_cell(item: Mapping[str, Any]) -> str:
    if not item["name"]:
        return str(item["doc"])
    optional = " (optional)" if item["optional"] else ""
    return f"`{item['name']}`{optional}: {item['doc']}"
