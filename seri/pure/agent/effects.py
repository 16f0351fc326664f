"""The effects the agent loop asks its interpreter to carry out, and what comes back.

The loop (``seri.pure.agent.turn``) is a generator: it yields one of these requests, the
interpreter in ``seri.runtime`` performs it and sends the answer back in. That keeps every
decision (budgets, permissions, when to compact, pairing) testable as plain values, and
every side effect in one thin place.

Each effect declares the type of its answer as the type argument of ``Request``:
``class CallModel(Request[ModelReply | ModelFailed])``. A flow asks with ``perform``, which
mypy types by that argument and which checks the answer that comes back; the interpreter
answers through a helper that mypy checks against the same argument. So the generators'
send type is ``Reply``, the union of every answer, never ``Any``.
"""

from __future__ import annotations

import typing
from collections.abc import Generator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, cast

import attrs

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.session.records import Message, ToolCall, Usage
from seri.pure.trajectories.event_record import Event

if TYPE_CHECKING:
    from seri.pure.compaction.recap import Recap
    from seri.pure.provider.provider_failure import OverflowNumbers, ProviderFailure

Purpose = Literal["turn", "summary"]
A = TypeVar("A")
T = TypeVar("T")


class Request(Generic[A]):
    """An effect answered with an ``A`` (the type argument is the declaration)."""

    __slots__ = ()
    # The answer's classes, read from the type argument when a subclass is made.
    answer_types: ClassVar[tuple[type, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            if typing.get_origin(base) is Request:
                (declared,) = typing.get_args(base)
                cls.answer_types = _classes(declared)

    def accept(self, answer: object) -> A:
        """``answer`` as this effect's answer; TypeError when it is not one (an interpreter bug)."""
        if not isinstance(answer, self.answer_types):
            kinds = " or ".join(t.__name__ for t in self.answer_types)
            raise TypeError(f"{type(self).__name__} is answered with {kinds}, not {answer!r}")
        return cast("A", answer)


def _classes(declared: object) -> tuple[type, ...]:
    if declared is None or declared is type(None):
        return (type(None),)
    members = typing.get_args(declared)
    if members:
        return tuple(kind for member in members for kind in _classes(member))
    assert isinstance(declared, type), declared
    return (declared,)


@attrs.frozen
class ModelReply:
    message: Message
    usage: Usage | None = None
    finish_reason: str = ""
    # False when a stream ended in the middle of a tool call's arguments.
    tool_calls_runnable: bool = True
    unrunnable_reason: str = ""
    # The model that served the call (OpenRouter may route to a fallback) and its generation id.
    model: str = ""
    generation_id: str = ""
    # The model declined: its words (also the message's text).
    refusal: str = ""


@attrs.frozen
class ModelFailed:
    """The call did not produce a complete answer. ``overflow``: the provider said too long.

    ``refused``: the provider refused the request before any of an answer arrived, and what
    it said (its kind, the numbers of an overflow, what a credit can pay for); the loop
    decides from it whether a smaller output budget would be accepted.
    """

    error: str
    overflow: bool = False
    interrupted: bool = False
    # The person pressed Ctrl-C (rather than the stream being cut): exit 130, not 1.
    by_user: bool = False
    # What arrived before the failure: its text (no tool calls, which never run) and usage.
    partial: Message | None = None
    usage: Usage | None = None
    # With ``overflow``: the token counts the provider's message stated (sizes the retry).
    overflow_numbers: OverflowNumbers | None = None
    refused: ProviderFailure | None = None
    # Not sent: the session changed since it was read, so its answer could not be stored.
    session_changed: bool = False


@attrs.frozen
class CallModel(Request[ModelReply | ModelFailed]):
    """Send ``messages`` (after the frozen system prompt, for a turn) to the model.

    ``max_tokens``: the answer budget of this request when the loop lowered it (None: as the
    settings say).
    """

    messages: tuple[Message, ...]
    purpose: Purpose = "turn"
    system_prompt: str = ""
    max_tokens: int | None = None


@attrs.frozen
class Answer:
    """A person's answer to ``AskPerson``: run it or not, the rules to add, why not."""

    approved: bool
    always: tuple[str, ...] = ()
    reason: str = ""


@attrs.frozen
class AskPerson(Request[Answer]):
    """Ask whether a tool call may run.

    Answered with an ``approval.Answer``: approved or not, the ``offered`` allow rules when
    the person said "always", the reason when they said no.
    """

    call: ToolCall
    reason: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    # The path the call touches, relative to the project (file tools), for showing the diff.
    path: str | None = None
    # The allow rules "always" adds for the rest of the session; () when none can be offered.
    offered: tuple[str, ...] = ()


@attrs.frozen
class ToolRun:
    """What running a tool gave: the text the model sees, and what it touched."""

    text: str
    is_error: bool = False
    interrupted: bool = False
    touched_paths: tuple[str, ...] = ()


@attrs.frozen
class RunTool(Request[ToolRun]):
    """Run one validated tool call. Answered with a ``ToolRun``.

    ``max_chars`` is the window's cap on one result: tools that can cut their output at the
    source (read_file's lines, bash's head and tail) keep within it.
    """

    call: ToolCall
    arguments: Mapping[str, Any]
    max_chars: int | None = None


@attrs.frozen
class CheckEdit(Request[ToolRun | None]):
    """Before a person is asked about an edit: does the file's text already refuse it?

    Answered with the tool's own failure, shown as a run that failed (None: ask). An edit
    whose ``old_string`` is not in the file changes nothing, so there is nothing to
    approve; the model gets the error at once, as Claude Code's input check gives it.
    """

    call: ToolCall
    arguments: Mapping[str, Any]
    # The file as the project names it (``ResolvedPath.relative``).
    path: str


@attrs.frozen
class ResolvedPath:
    relative: str | None
    absolute: str | None
    # Set when the path leads outside the project: why, naming where it resolved to.
    refused: str = ""


@attrs.frozen
class ResolvePath(Request[ResolvedPath]):
    """Resolve a tool's path argument against the project (symlinks followed).

    Answered with ``ResolvedPath``: permission rules must judge the real path,
    or a link could lead past a deny rule.
    """

    raw: str


@attrs.frozen
class Persist(Request[None]):
    """Append messages to the session, durably, before going on. Answered with None."""

    messages: tuple[Message, ...]


@attrs.frozen
class Record(Request[None]):
    """Add an event to the run's trajectory. Answered with None."""

    event: Event


@attrs.frozen
class CountSpending(Request[UsageTotals]):
    """What the run's model calls have used so far: every call of this run of seri (its
    tasks', the summarizer's, its subagents'). Answered with ``UsageTotals``; asked only when
    the run has a cost budget."""


@attrs.frozen
class Say(Request[None]):
    """Tell the person something (a warning, a notice) on stderr. Answered with None."""

    text: str


@attrs.frozen
class UpdateCounters(Request[None]):
    """Store the turn count (None: keep the stored one; a compaction runs no turns), the last
    billed input tokens, the learned token scale (0: not measured) and the window a provider's
    overflow answer stated (0: none). Answered with None."""

    turns_used: int | None
    last_input_tokens: int
    token_scale: float = 0.0
    learned_window: int = 0


@attrs.frozen
class SpillText(Request[str]):
    """Keep ``text`` whole in a spill file the model can page through with read_file.

    Answered with the file's path, or "" when it could not be written.
    """

    text: str


@attrs.frozen
class ShrinkPayloads(Request[bool]):
    """Replace messages of the session, by position, with their elided forms, in one
    transaction that also records the shrink in the ledger.

    Answered with True, or False when the session changed meanwhile (nothing written).
    """

    replacements: tuple[tuple[int, Message], ...]
    trigger: str
    estimate_before: int
    estimate_after: int


@attrs.frozen
class ApplyCompaction(Request[bool]):
    """Replace the first ``evicted`` messages by ``recap_message``, in one transaction.

    Answered with True, or False when the session changed meanwhile (nothing written).
    """

    evicted: int
    recap: Recap
    recap_message: Message
    trigger: str
    focus: str
    estimate_before: int
    estimate_after: int
    # How many requests the summarizer's fold took (refused ones included).
    summary_calls: int = 1
    # The scale the fold learned (0: none measured), kept with the session.
    token_scale: float = 0.0
    # The compaction contract's marks (seri.pure.compaction.compaction_contract): whether the task
    # in hand and the goal came through verbatim (None: there was none), the tokens the next
    # request writes to the provider's cache again, and (filled in by the interpreter, which
    # sees the summarizer's calls) what the summarizer cost.
    task_kept: bool | None = None
    goal_kept: bool | None = None
    cache_rewrite_tokens: int = 0
    summary_input_tokens: int = 0
    summary_output_tokens: int = 0
    summary_cost: float | None = None


# What hooks decide (``seri.pure.extensions.hook_decisions``): nothing, or one of these.
HookVerdict = Literal["", "allow", "deny", "ask", "block"]


@attrs.frozen
class HookDecision:
    """What the hooks of one event decided; the empty decision is "go on as if none ran"."""

    decision: HookVerdict = ""
    # Why (for deny, ask, block): what the model or the person reads.
    reason: str = ""
    # Added for the model (additionalContext, a prompt hook's stdout).
    context: tuple[str, ...] = ()
    # For the person (systemMessage, a non-blocking error).
    notices: tuple[str, ...] = ()
    # ``continue: false``: the session stops what it is doing.
    stop: bool = False
    stop_reason: str = ""

    @property
    def label(self) -> str:
        """One word for the trajectory and the chat line."""
        if self.decision:
            return self.decision
        if self.stop:
            return "stop"
        return "context" if self.context else "none"


NOTHING = HookDecision()


@attrs.frozen
class RunHooks(Request[HookDecision]):
    """Run the hooks configured for ``event`` whose matcher takes ``subject`` (a tool's name;
    empty for events without one), with ``fields`` as the event's own part of their input.
    Answered with what they decided together (``seri.pure.extensions.hook_decisions``)."""

    event: str
    fields: tuple[tuple[str, Any], ...] = ()
    subject: str = ""
    tool_call: str = ""


Effect = (
    CallModel
    | AskPerson
    | ResolvePath
    | RunTool
    | CheckEdit
    | Persist
    | Record
    | CountSpending
    | Say
    | UpdateCounters
    | ApplyCompaction
    | SpillText
    | ShrinkPayloads
    | RunHooks
)

# Every answer an effect can get: what a flow's generator is sent.
Reply = (
    ModelReply
    | ModelFailed
    | Answer
    | ResolvedPath
    | ToolRun
    | UsageTotals
    | HookDecision
    | str
    | bool
    | None
)
# A flow of effects that ends with a ``T``.
Flow = Generator[Effect, Reply, T]
EFFECT_TYPES: tuple[type, ...] = typing.get_args(Effect)


def perform(effect: Request[A]) -> Flow[A]:
    """Ask for one effect and get its answer, typed and checked by the effect's declaration."""
    assert isinstance(effect, EFFECT_TYPES), effect
    answer = yield cast("Effect", effect)
    return effect.accept(answer)
