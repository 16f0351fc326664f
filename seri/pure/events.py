"""The trajectory's events: one frozen record per type, defined here and nowhere else.

Everything seri records about a run is one of these records: the loop yields them in a
``Record`` effect, the runtime hands them to the recorder, and the recorder stores
``event.export()`` under ``event.type``. So a record's ``type`` is stable (it is what
``seri trajectory export`` writes, and what the exporters of stream JSON, ATIF and
OpenTelemetry key on), and its export is the one dict every consumer reads.

Each field says in its ``doc`` what it holds; the schema table of the README and
``tests/golden/trajectory_schema.json`` are made from these records (``event_schema``),
and a test fails when either drifts from them. A field whose value is ``ABSENT`` is left
out of the export: some events have a shorter form (a tool call refused before it ran, a
turn that ended without an error). The export's keys are the fields' names in their order
(``export_name`` where Python's differs, as for ``from``).

Adding an event type: a record here (with ``type`` and documented fields, each marked
with ``telemetry`` if its OpenTelemetry span event carries it) and the place that builds
it; ``make golden`` writes the new schema, and the README table with it. Code elsewhere
names a type as ``ModelCall.type``, never as a string (tests/test_event_types_defined_once.py),
and reads a stored event back through ``decode``.
"""

from __future__ import annotations

import collections.abc
import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Literal, Self

import attrs

from seri.pure.records import Usage
from seri.pure.settings import Settings
from seri.pure.usage_totals import UsageTotals


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
class Retry(Event):
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


# --- tool calls --------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class ToolCall(Event):
    """A tool call the model asked for."""

    type: ClassVar[str] = "tool_call"

    id: str = field("the call's id")
    name: str = field("the tool")
    arguments: str = field("the arguments text as the model sent it")


@attrs.frozen(kw_only=True)
class ToolResult(Event):
    """What a tool call gave the model (a call refused before it ran: `id`, `ok`, `error`)."""

    type: ClassVar[str] = "tool_result"

    id: str = field("the call's id")
    name: str | Absent = field("the tool", optional=True)
    ok: bool = field("false for an error")
    interrupted: bool | Absent = field("Ctrl-C stopped it", optional=True)
    bytes: int | Absent = field("of the whole result", optional=True)
    text: str | Absent = field(
        "what the model was given, cut to the window's share (elided when large)", optional=True
    )
    error: str | Absent = field("why it was refused before running", optional=True)


@attrs.frozen(kw_only=True)
class Denial(Event):
    """A tool call that was not allowed to run."""

    type: ClassVar[str] = "denial"

    id: str = field("the call's id")
    name: str = field("the tool", telemetry="plain")
    rule: str = field(
        "the deciding rule; `(protected)`, `(project)` for a path outside the project, "
        '`""` when a person said no',
        telemetry="plain",
    )
    reason: str = field(
        "why (`denied by user: …` carries what the person typed)", telemetry="content"
    )
    by: str | Absent = field("`policy` or `user`", optional=True, telemetry="plain")


@attrs.frozen(kw_only=True)
class SessionRule(Event):
    """A person answered "always": allow rules stored with the session (its later runs
    allow them too)."""

    type: ClassVar[str] = "session_rule"

    id: str = field("the call that was approved")
    rules: tuple[str, ...] = field("the allow rules added", telemetry="content")


@attrs.frozen(kw_only=True)
class Checkpoint(Event):
    """A file's content kept before a write (what /rewind puts back)."""

    type: ClassVar[str] = "checkpoint"

    tool: str = field("the writing tool", telemetry="plain")
    path: str = field("the file, relative to the project", telemetry="content")
    existed: bool = field("whether there was a file", telemetry="plain")
    bytes: int = field("its size", telemetry="plain")
    sha256: str | None = field("its hash (null for a new file)", telemetry="content")


@attrs.frozen(kw_only=True)
class Edit(Event):
    """What a write did to a file: the tool and its outcome's details."""

    type: ClassVar[str] = "edit"

    tool: str = field("`write_file` or `edit`", telemetry="plain")
    details: tuple[tuple[str, object], ...] = attrs.field(
        metadata={
            "doc": "`outcome` (`applied`, `not_found`, `ambiguous`, `unchanged`, …), `path`, "
            "`bytes`, `created`, `replacements`, `occurrences`",
            "export_name": "",
            "flatten": True,
            # Its keys as span event attributes: as they are, and as content.
            "telemetry": (
                ("outcome", "bytes", "created", "replacements", "occurrences"),
                ("path",),
            ),
        }
    )


@attrs.frozen(kw_only=True)
class Check(Event):
    """The project's check command, run after a successful write."""

    type: ClassVar[str] = "check"

    command: str = field("the command", telemetry="content")
    exit_code: int | None = field("its exit status", telemetry="plain")
    ok: bool = field("it passed", telemetry="plain")
    seconds: float = field("how long it ran", telemetry="plain")
    output: str = field("what it printed", telemetry="content")


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
class MemoryStaged(Event):
    """The model asked to remember something (nothing is written until approved)."""

    type: ClassVar[str] = "memory_staged"

    n: int = field("the entry's number", telemetry="plain")
    scope: str = field("`project` or `global`", telemetry="plain")
    bytes: int = field("its size", telemetry="plain")


@attrs.frozen(kw_only=True)
class SubagentStart(Event):
    """The `task` tool started a subagent."""

    type: ClassVar[str] = "subagent_start"

    child: str = field("the subagent's session")
    description: str = field("the task's few words", telemetry="content")


@attrs.frozen(kw_only=True)
class SubagentEnd(Event):
    """A subagent ended."""

    type: ClassVar[str] = "subagent_end"

    child: str = field("the subagent's session")
    status: str = field("how its task ended, or `error`", telemetry="plain")
    turns: int | Absent = field("the turns it took", optional=True, telemetry="plain")


@attrs.frozen(kw_only=True)
class McpServer(Event):
    """An MCP server of the chat: up with its tools, not started, stopped and started again,
    gone, or offering other tools. What a person was told on stderr is `detail`."""

    type: ClassVar[str] = "mcp_server"

    server: str = field("the server's name in the configuration", telemetry="plain")
    state: str = field(
        "`ready` (started, at the first wait or later), `failed` (could not be started, or "
        "started again), `starting` (still starting when the first task went without it), "
        "`restarting` (it stopped; started again once), `restarted`, `gone` (stopped again "
        "after its restart: its tools are gone for the session) or `tools_changed`",
        telemetry="plain",
    )
    tools: int = field("the tools it offers now (0 once failed or gone)", telemetry="plain")
    detail: str | Absent = field(
        "why, in the words said on stderr", optional=True, telemetry="content"
    )


# --- the history -------------------------------------------------------------------------------


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
class Rule(Event):
    """A glob rule fired: its text was added for the model."""

    type: ClassVar[str] = "rule"

    name: str = field("the rule", telemetry="plain")
    paths: tuple[str, ...] = field("the paths touched that matched", telemetry="content")


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
    Retry,
    ToolCall,
    ToolResult,
    Denial,
    SessionRule,
    ModelSwitch,
    Checkpoint,
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
    Rule,
    TurnEnd,
    SubagentStart,
    SubagentEnd,
    McpServer,
    MemoryStaged,
    HookRun,
)

EVENTS_BY_TYPE: Mapping[str, type[Event]] = {kind.type: kind for kind in EVENT_TYPES}


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
