"""The events that changed a session's history: compactions, shrinks and fired rules.

A compaction (its start, then its outcome) replaced older messages by a recap, a shrink
replaced oversized tool payloads, a glob rule added its text for the model. The records are
part of ``events.EVENT_TYPES``, and follow its rules.
"""

from __future__ import annotations

from typing import ClassVar

import attrs

from seri.pure.trajectories.event_record import Absent, Event, field


@attrs.frozen(kw_only=True)
class Compaction(Event):
    """Older messages were replaced by a recap."""

    type: ClassVar[str] = "compaction"

    trigger: str = field("`auto`, `overflow`, `manual` or `shell`", telemetry="plain")
    focus: str = field("the words after /compact", telemetry="content")
    evicted: int = field("messages replaced", telemetry="plain")
    kept: int = field("messages kept", telemetry="plain")
    estimate_before: int = field("tokens before", telemetry="plain")
    estimate_after: int = field("tokens after", telemetry="plain")
    summary_calls: int = field("the fold's requests, refused ones included", telemetry="plain")
    token_scale: float = field("provider tokens per ceil(chars/4)", telemetry="plain")
    still_too_big: str | Absent = field(
        "why the session still does not fit after it (absent when it fits)", optional=True
    )


@attrs.frozen(kw_only=True)
class CompactionStart(Event):
    """A compaction is about to call the summarizer (its outcome follows as `compaction`)."""

    type: ClassVar[str] = "compaction_start"

    trigger: str = field("as for `compaction`", telemetry="plain")
    evicting: int = field("messages the cut replaces", telemetry="plain")
    estimate_before: int = field("tokens before", telemetry="plain")
    context_window: int = field("the window's tokens", telemetry="plain")


@attrs.frozen(kw_only=True)
class Shrink(Event):
    """Oversized tool payloads were replaced by `{"elided": true, "originalBytes": N,
    "fullText": FILE}`."""

    type: ClassVar[str] = "shrink"

    trigger: str = field("as for `compaction`", telemetry="plain")
    elided: int = field("payloads replaced", telemetry="plain")
    messages: int = field("messages changed", telemetry="plain")
    estimate_before: int = field("tokens before", telemetry="plain")
    estimate_after: int = field("tokens after", telemetry="plain")


@attrs.frozen(kw_only=True)
class RuleEvent(Event):
    """A glob rule fired: its text was added for the model."""

    type: ClassVar[str] = "rule"

    name: str = field("the rule", telemetry="plain")
    paths: tuple[str, ...] = field("the paths touched that matched", telemetry="content")
