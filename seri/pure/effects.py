"""The effects the agent loop asks its driver to carry out, and what comes back.

The loop (``seri.pure.turn``) is a generator: it yields one of these requests,
the driver in ``seri.io`` performs it and sends the answer back in. That keeps
every decision (budgets, permissions, when to compact, pairing) testable as
plain values, and every side effect in one thin place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from seri.pure.provider_failure import OverflowNumbers
from seri.pure.recap import Recap
from seri.pure.records import Message, ToolCall, Usage

Purpose = Literal["turn", "summary"]


@attrs.frozen
class CallModel:
    """Send ``messages`` (after the frozen system prompt, for a turn) to the model.

    Answered with ``ModelReply`` or ``ModelFailed``.
    """

    messages: tuple[Message, ...]
    purpose: Purpose = "turn"
    system_prompt: str = ""


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
    """The call did not produce a complete answer. ``overflow``: the provider said too long."""

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


@attrs.frozen
class AskPerson:
    """Ask whether a tool call may run.

    Answered with True (run it), False, or an ``approval.Answer``: approved or not, the
    ``offered`` allow rules when the person said "always", the reason when they said no.
    """

    call: ToolCall
    reason: str
    arguments: Mapping[str, Any] = attrs.field(factory=dict)
    # The path the call touches, relative to the project (file tools), for showing the diff.
    path: str | None = None
    # The allow rules "always" adds for the rest of the session; () when none can be offered.
    offered: tuple[str, ...] = ()


@attrs.frozen
class RunTool:
    """Run one validated tool call. Answered with a ``ToolRun``.

    ``max_chars`` is the window's cap on one result: tools that can cut their output at the
    source (read_file's lines, bash's head and tail) keep within it.
    """

    call: ToolCall
    arguments: Mapping[str, Any]
    max_chars: int | None = None


@attrs.frozen
class ResolvePath:
    """Resolve a tool's path argument against the project (symlinks followed).

    Answered with ``ResolvedPath``: permission rules must judge the real path,
    or a link could lead past a deny rule.
    """

    raw: str


@attrs.frozen
class ResolvedPath:
    relative: str | None
    absolute: str | None
    # Set when the path leads outside the project: why, naming where it resolved to.
    refused: str = ""


@attrs.frozen
class ToolRun:
    """What running a tool gave: the text the model sees, and what it touched."""

    text: str
    is_error: bool = False
    interrupted: bool = False
    touched_paths: tuple[str, ...] = ()


@attrs.frozen
class Persist:
    """Append messages to the session, durably, before going on. Answered with None."""

    messages: tuple[Message, ...]


@attrs.frozen
class Record:
    """Add an event to the run's trajectory. Answered with None."""

    type: str
    data: Mapping[str, Any]


@attrs.frozen
class Say:
    """Tell the person something (a warning, a notice) on stderr. Answered with None."""

    text: str


@attrs.frozen
class UpdateCounters:
    """Store the turn count, the last billed input tokens and the learned token scale (0: not
    measured). Answered with None."""

    turns_used: int
    last_input_tokens: int
    token_scale: float = 0.0


@attrs.frozen
class SpillText:
    """Keep ``text`` whole in a spill file the model can page through with read_file.

    Answered with the file's path, or "" when it could not be written.
    """

    text: str


@attrs.frozen
class ShrinkPayloads:
    """Replace messages of the session, by position, with their elided forms, in one
    transaction that also records the shrink in the ledger.

    Answered with True, or False when the session changed meanwhile (nothing written).
    """

    replacements: tuple[tuple[int, Message], ...]
    trigger: str
    estimate_before: int
    estimate_after: int


@attrs.frozen
class ApplyCompaction:
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


Effect = (
    CallModel
    | AskPerson
    | ResolvePath
    | RunTool
    | Persist
    | Record
    | Say
    | UpdateCounters
    | ApplyCompaction
    | SpillText
    | ShrinkPayloads
)
