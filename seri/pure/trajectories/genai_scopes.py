"""The records of the GenAI trace fold: the records it reads, the scopes it keeps open.

A ``TrajectoryRecord`` is one exported line; ``RunContext`` what its run's header says; an
``AgentScope`` or a ``ToolSpanScope`` a span still open (an agent's or a tool's), kept on the
``TraceState``'s stack until a record ends it. Ids are derived, not drawn (``span_id_of``,
``trace_id_of``), and ``data_text``/``data_seconds`` read a record's field as the fold
needs it. The fold itself is ``genai_trace``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.trajectories.genai_attributes import Content, Server
from seri.pure.trajectories.genai_metrics import MetricObservation
from seri.pure.trajectories.otlp_model import Attributes, Span, SpanEvent

AgentRole = Literal["pending", "task", "standalone", "subagent"]


@attrs.frozen
class TrajectoryRecord:
    """One line of ``seri trajectory export``: its type, session, run, time (epoch seconds),
    its own fields, and its position in its run (the header is 0)."""

    type: str
    session: str
    run: str
    at: float
    data: Mapping[str, Any]
    ordinal: int


@attrs.frozen
class RunContext:
    """What a run's header says, as far as its spans need it."""

    session: str
    run: str
    model: str = ""
    server: Server = attrs.Factory(Server)
    version: str = ""
    interactive: bool = False
    requests: Attributes = ()
    context_window: int | None = None
    # The run's tags (SERI_RUN_TAGS, --tag) as ``seri.tag.KEY`` attributes: on every span.
    tags: Attributes = ()


@attrs.frozen
class AgentScope:
    role: AgentRole
    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    start_ns: int
    last_ns: int
    conversation: str
    model: str
    estimated_start: bool = False
    events: tuple[SpanEvent, ...] = ()
    totals: UsageTotals = attrs.Factory(UsageTotals)
    status: str = ""
    turns: int | None = None
    error: str = ""
    compacted: bool = False
    # What the last turn call came to: "model_call" (answered), "overflow" (refused), or ""
    # (none since the last tool or compaction): a failed task ending now names its call.
    last_call: str = ""
    chats: int = 0


@attrs.frozen
class ToolSpanScope:
    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    start_ns: int
    last_ns: int
    call_id: str
    name: str
    attributes: Attributes = ()
    events: tuple[SpanEvent, ...] = ()
    denied: bool = False
    message: str = ""  # why the call was not run


Scope = AgentScope | ToolSpanScope


@attrs.frozen
class TraceState:
    content: Content = attrs.Factory(Content)
    run: RunContext | None = None
    stack: tuple[Scope, ...] = ()
    mark_ns: int = 0
    start_known: bool = False
    during_call: tuple[SpanEvent, ...] = ()


@attrs.frozen
class TraceOutput:
    spans: tuple[Span, ...] = ()
    observations: tuple[MetricObservation, ...] = ()


def span_id_of(run: str, ordinal: int, role: str) -> bytes:
    return _digest("span", run, ordinal, role, 8)


def trace_id_of(run: str, ordinal: int) -> bytes:
    return _digest("trace", run, ordinal, "", 16)


def _digest(kind: str, run: str, ordinal: int, role: str, size: int) -> bytes:
    text = f"seri.{kind}\0{run}\0{ordinal}\0{role}".encode("utf-8", "replace")
    found = hashlib.sha256(text).digest()[:size]
    # An all-zero id means "no id" in OTLP; a hash landing there is astronomically rare.
    return found if any(found) else b"\x01" * size


def data_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


# Beyond the year 9999 a number is not a time (and in nanoseconds would overflow a float).
_LAST_SECOND = 253_402_300_799


def data_seconds(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value) if abs(value) <= _LAST_SECOND else None
    return None
