"""What the ATIF export is handed: a run's recorded events and the sessions' stored messages.

The caller reads the store and hands in these records (``atif`` reads nothing): one run's
header and events with the messages stored while it ran, a session's messages no recorded
run covers, and the subagent sessions' messages. A subagent records into its parent's run,
so a run's events are split into its own and each subagent's (``split_spans``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.session.records import Message
from seri.pure.trajectories import tool_events


@attrs.frozen
class RecordedEvent:
    """One stored event: its type, time and JSON body as the recorder wrote it."""

    type: str
    at: float
    body: str


@attrs.frozen
class StoredMessage:
    seq: int
    created: float
    message: Message


@attrs.frozen
class SessionMessages:
    """A subagent session's stored messages."""

    session_id: str
    messages: tuple[StoredMessage, ...]


@attrs.frozen
class RunRecording:
    """One run: its header and events, the session's messages stored while it ran, and the
    messages of the subagent sessions it started."""

    session_id: str
    run_id: str
    started: float
    header: str
    events: tuple[RecordedEvent, ...]
    messages: tuple[StoredMessage, ...]
    subagents: tuple[SessionMessages, ...] = ()
    # The trajectory id of the session's next document ('' for the last).
    continued_by: str = ""


@attrs.frozen
class UnrecordedMessages:
    """A session's messages from before its first recorded run (or of a session never
    recorded): an imported session, or one written with recording off."""

    session_id: str
    model: str
    project: str
    imported: bool
    messages: tuple[StoredMessage, ...]
    subagents: tuple[SessionMessages, ...] = ()
    continued_by: str = ""


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json_text.loads_stored(text)
    except ValueError:
        return {"body": text}
    return value if isinstance(value, dict) else {"body": value}


def subagents_started(events: Iterable[RecordedEvent]) -> tuple[str, ...]:
    """The child sessions a run's events name (the caller loads their messages)."""
    found = []
    for event in events:
        if event.type == tool_events.SubagentStart.type:
            child = json_object(event.body).get("child")
            if isinstance(child, str) and child not in found:
                found.append(child)
    return tuple(found)


def split_spans(
    events: Sequence[RecordedEvent],
) -> tuple[list[RecordedEvent], dict[str, list[RecordedEvent]]]:
    """The run's own events (with the subagent markers) and each subagent's events.

    A subagent runs inside its parent's tool call and records into the parent's run,
    between its ``subagent_start`` and ``subagent_end``; deeper ones stay in their
    parent's list, to be split again when that child is built.
    """
    own: list[RecordedEvent] = []
    spans: dict[str, list[RecordedEvent]] = {}
    inside = ""
    depth = 0
    for event in events:
        if inside:
            child = json_object(event.body).get("child")
            if event.type == tool_events.SubagentStart.type:
                depth += 1
            elif event.type == tool_events.SubagentEnd.type and (depth == 0 or child == inside):
                if depth == 0:
                    own.append(event)
                    inside = ""
                    continue
                depth -= 1
            spans[inside].append(event)
            continue
        own.append(event)
        if event.type == tool_events.SubagentStart.type:
            child = json_object(event.body).get("child")
            if isinstance(child, str):
                inside = child
                spans.setdefault(child, [])
    return own, spans
