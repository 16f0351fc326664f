"""The trajectory's events: one frozen record per type, defined here and nowhere else.

Everything seri records about a run is one of these records: the loop yields them in a
``Record`` effect, the runtime hands them to the recorder, and the recorder stores
``event.export()`` under ``event.type``. So a record's ``type`` is stable (it is what
``seri trajectory export`` writes, and what the exporters of stream JSON, ATIF and
OpenTelemetry key on), and its export is the one dict every consumer reads.

Here: the run's records (its header, window, model switch and usage), its model calls', and
its tasks' (their end, their goal's checks, their hooks), and ``EVENT_TYPES``, the list of
every type. The records of tool calls are in ``tool_events``, those that changed the history
in ``history_events``; what a record is (``Event``, ``field``, ``ABSENT``) in
``event_record``. Each field says in its ``doc`` what it holds; the schema table of the
README and ``tests/golden/trajectory_schema.json`` are made from the records
(``trajectory_schema``), and a test fails when either drifts from them.

Adding an event type: a record here or in the module of its kind (with ``type`` and
documented fields, each marked with ``telemetry`` if its OpenTelemetry span event carries
it), listed in ``EVENT_TYPES``, and the place that builds it; ``make golden`` writes the new
schema, and the README table with it. Code elsewhere names a type as ``ModelCall.type``,
never as a string (tests/test_event_types_defined_once.py), and reads a stored event back
through ``event_decoding.decode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.settings import Settings
from seri.pure.session.records import Usage
from seri.pure.trajectories.event_record import Absent, Event, field
from seri.pure.trajectories.history_events import Compaction, CompactionStart, RuleEvent, Shrink
from seri.pure.trajectories.tool_events import (
    Check,
    CheckpointEvent,
    Denial,
    Edit,
    McpServer,
    MemoryStaged,
    SessionRuleEvent,
    SubagentEnd,
    SubagentStart,
    ToolCallEvent,
    ToolResult,
)

# --- the run -----------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Header(Event):
    """How a run (one invocation of seri on a session) was set up: the first line of its
    recording. A chat's header names its project, budget and sandbox; a `seri compact`'s
    says `command`."""

    type: ClassVar[str] = "header"

    session: str = field("the session the run wrote", line_key=True)
    run: str = field("the run's id", line_key=True)
    seri_version: str = field("the version of seri that ran")
    command: str | Absent = field("`compact` for `seri compact`", optional=True)
    model: str = field("the model the run talked to")
    base_url: str = field("the provider's API")
    project: str | Absent = field("the directory the chat ran in", optional=True)
    started: float = field("when the run began (epoch s)")
    sampling: Mapping[str, Any] = field("the sampling settings of config.json")
    provider: Mapping[str, Any] = field("the OpenRouter provider pin")
    reasoning_effort: str | None = field("the reasoning effort asked for")
    prompt_hashes: Mapping[str, str] = field("prompt source → sha256 of what it added")
    max_turns: int | Absent = field("the turn budget of each task", optional=True)
    context_window: int | None = field("the window config.json sets (null: asked of the server)")
    keep_tokens: int = field("compaction's keep budget")
    elide_bytes: int = field("payloads over this many bytes are elided for the summarizer")
    check_command: str | Absent | None = field("the check run after every write", optional=True)
    interactive: bool | Absent = field("whether a person could be asked", optional=True)
    sandbox: str | Absent = field("`bubblewrap`, `landlock` or `none`", optional=True)
    tags: Mapping[str, str] | Absent = field(
        "the run's tags (`SERI_RUN_TAGS`, `--tag KEY=VALUE`): KEY → VALUE; a chat's header "
        "always has them (`{}` when none)",
        optional=True,
    )

    @classmethod
    def of(
        cls,
        settings: Settings,
        *,
        session: str,
        run: str,
        version: str,
        started: float,
        prompt_hashes: Mapping[str, str],
    ) -> Header:
        """What every run's header says of its settings; a chat adds its own fields."""
        return cls(
            session=session,
            run=run,
            seri_version=version,
            model=settings.model,
            base_url=settings.base_url,
            started=started,
            sampling=dict(settings.sampling),
            provider=dict(settings.provider),
            reasoning_effort=settings.reasoning_effort or None,
            prompt_hashes=dict(prompt_hashes),
            context_window=settings.context_window,
            keep_tokens=settings.keep_tokens,
            elide_bytes=settings.elide_bytes,
        )


@attrs.frozen(kw_only=True)
class ContextWindow(Event):
    """The window used, when config.json sets none."""

    type: ClassVar[str] = "context_window"

    tokens: int = field("its size", telemetry="plain")
    from_: str = field("`server` (asked of it) or `default`", export_name="from", telemetry="plain")


@attrs.frozen(kw_only=True)
class ModelSwitch(Event):
    """`/model NAME`: the rest of the run talks to another model."""

    type: ClassVar[str] = "model_switch"

    model: str = field("the model switched to", telemetry="plain")


@attrs.frozen(kw_only=True)
class RunUsage(Event):
    """At the end of a run: what its model calls used, and how much came from the cache."""

    type: ClassVar[str] = "run_usage"

    calls: int = field("calls whose usage the provider reported")
    input_tokens: int = field("their input tokens")
    cached_tokens: int = field("of which read from the prompt cache")
    cache_write_tokens: int = field("written to the prompt cache")
    output_tokens: int = field("their output tokens")
    cached_share: float | None = field("cached over input tokens")
    cost: float | None = field("what the provider charged")
    upstream_cost: float | None = field("what an upstream provider charged (your own key)")
    cache_markers: int = field("prompt-cache breakpoints sent")

    @classmethod
    def of(cls, totals: UsageTotals, *, cache_markers: int) -> RunUsage:
        share = totals.cached_share()
        return cls(
            calls=totals.reported,
            input_tokens=totals.input_tokens,
            cached_tokens=totals.cached_tokens,
            cache_write_tokens=totals.cache_write_tokens,
            output_tokens=totals.output_tokens,
            cached_share=None if share is None else round(share, 4),
            cost=totals.cost,
            upstream_cost=totals.upstream_cost,
            cache_markers=cache_markers,
        )


# --- model calls -------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ModelCall(Event):
    """One model call of a turn (also one that failed after part of its answer arrived:
    `finish_reason` `incomplete`, without `model` and `generation_id`)."""

    type: ClassVar[str] = "model_call"

    finish_reason: str = field("why the answer ended")
    usage: Usage | None = field(
        "`input_tokens`, `output_tokens`, `reasoning_tokens`, `cached_tokens`, "
        "`cache_write_tokens`, `cost`, `upstream_cost` (with your own key, what the upstream "
        'provider charged), `provider` (the one that served it); or `{"reported": false}`'
    )
    tool_calls: int = field("how many tool calls the answer asked for")
    model: str | Absent | None = field("the model that served it", optional=True)
    generation_id: str | Absent | None = field("the provider's id of the answer", optional=True)
    refusal: str | Absent = field("the model's words when it declined", optional=True)


@attrs.frozen(kw_only=True)
class SummaryCall(Event):
    """One call of the compaction summarizer."""

    type: ClassVar[str] = "summary_call"

    usage: Usage | None = field("as in `model_call`")
    finish_reason: str = field("why the answer ended")


@attrs.frozen(kw_only=True)
class RetryEvent(Event):
    """A failed request about to be sent again."""

    type: ClassVar[str] = "retry"

    attempt: int = field("the attempt that failed (from 1)", telemetry="plain")
    status: int | None = field("its HTTP status (null for a connection failure)", telemetry="plain")
    delay: float = field("seconds until the next attempt", telemetry="plain")
    reason: str = field("what went wrong", telemetry="plain")


@attrs.frozen(kw_only=True)
class Overflow(Event):
    """The provider refused a request as too long."""

    type: ClassVar[str] = "overflow"

    error: str = field("what it said", telemetry="plain")
    estimate: int = field("seri's estimate of the request (tokens)", telemetry="plain")
    purpose: str = field("`turn` or `summary`", telemetry="plain")
    token_scale: float = field(
        "provider tokens per ceil(chars/4), as learned from the refusal", telemetry="plain"
    )
    context_window: int = field("the window, as learned from the refusal", telemetry="plain")


@attrs.frozen(kw_only=True)
class OutputBudgetLowered(Event):
    """The input fit and only the answer budget did not (or a 402 named what the credit left
    can pay for): the budget was lowered instead of compacting, and the call sent again."""

    type: ClassVar[str] = "output_budget_lowered"

    key: str = field("`max_tokens` or `max_completion_tokens`", telemetry="plain")
    to: int = field("the new budget", telemetry="plain")
    why: str = field("in words", telemetry="plain")


# --- tasks -------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class GoalCheck(Event):
    """The goal's check command ran after a task (`--until`, `/goal`)."""

    type: ClassVar[str] = "goal_check"

    command: str = field("the command", telemetry="content")
    n: int = field("which check of the run this was, from 1", telemetry="plain")
    exit_code: int | None = field(
        "its exit status (null when its time limit stopped it)", telemetry="plain"
    )
    ok: bool = field("it passed: the goal is met", telemetry="plain")
    timed_out: bool = field("its time limit stopped it", telemetry="plain")
    seconds: float = field("how long it ran", telemetry="plain")
    output: str = field("the tail of what it printed", telemetry="content")


@attrs.frozen(kw_only=True)
class GoalEnd(Event):
    """A goal run ended: its check passed, or a rule or the task ended it."""

    type: ClassVar[str] = "goal_end"

    status: str = field(
        "`done`, `stalled`, `max_checks`, `wall`, or the status of the task that ended it",
        telemetry="plain",
    )
    checks: int = field("the checks run", telemetry="plain")
    detail: str | Absent = field("why it ended unmet", optional=True, telemetry="content")


@attrs.frozen(kw_only=True)
class TurnEnd(Event):
    """A task ended."""

    type: ClassVar[str] = "turn_end"

    status: str = field(
        "`done`, `max_turns`, `budget`, `interrupted`, `overflow`, `error`, `length` or "
        "`refused` (the prompt was too big for the window; nothing was stored)"
    )
    turns: int = field("the model turns used")
    error: str | Absent = field("what went wrong", optional=True)


@attrs.frozen(kw_only=True)
class HookRun(Event):
    """A hook ran (README: Hooks and skills): a command the person or an approved project
    configured for an event of the session."""

    type: ClassVar[str] = "hook_run"

    event: str = field(
        "the hook event: `SessionStart`, `UserPromptSubmit`, `PreToolUse`, `PostToolUse`, "
        "`PreCompact`, `PostCompact`, `Stop` or `SessionEnd`",
        telemetry="plain",
    )
    command: str = field("the command as configured", telemetry="content")
    source: str = field(
        "where it is configured: `config.json`, `.seri/hooks.json` or `.claude/settings.json`",
        telemetry="plain",
    )
    exit_code: int | None = field(
        "its exit status (null: it did not finish in time, or did not start)", telemetry="plain"
    )
    seconds: float = field("how long it ran", telemetry="plain")
    decision: str = field(
        "what it decided: `allow`, `deny`, `ask`, `block` (a prompt refused, or the model sent "
        "back to work), `stop`, `context` (it added text for the model) or `none`",
        telemetry="plain",
    )
    reason: str | Absent = field(
        "its reason, added context or error, as the model or the person read it",
        optional=True,
        telemetry="content",
    )
    tool_call: str | Absent = field(
        "the tool call it was about (PreToolUse, PostToolUse)", optional=True, telemetry="plain"
    )


EVENT_TYPES: tuple[type[Event], ...] = (
    Header,
    ModelCall,
    SummaryCall,
    RetryEvent,
    ToolCallEvent,
    ToolResult,
    Denial,
    SessionRuleEvent,
    ModelSwitch,
    CheckpointEvent,
    Edit,
    Check,
    GoalCheck,
    GoalEnd,
    CompactionStart,
    Compaction,
    Shrink,
    Overflow,
    OutputBudgetLowered,
    ContextWindow,
    RunUsage,
    RuleEvent,
    TurnEnd,
    SubagentStart,
    SubagentEnd,
    McpServer,
    MemoryStaged,
    HookRun,
)

EVENTS_BY_TYPE: Mapping[str, type[Event]] = {kind.type: kind for kind in EVENT_TYPES}
