"""The immutable records every layer speaks: messages, tool calls, usage, sessions.

Records are frozen attrs classes whose collection fields are tuples, so a value
handed to a pure function can never change under it. Converting them to and
from JSON or database rows happens at the edge (``seri.io.session.codec``), never here.
"""

from __future__ import annotations

from typing import Literal

import attrs

Role = Literal["system", "user", "assistant", "tool"]

# What a message is for, beyond its role. A recap and a fired rule are user
# messages to the model but are not things the person typed: /rewind must not
# offer them and compaction treats the recap specially. "partial" marks the text
# of an answer whose stream was cut or failed: kept, so nothing the person saw is
# lost, and flagged as incomplete.
MessageKind = Literal["", "recap", "rule", "synthetic", "partial", "skill", "hook"]


@attrs.frozen
class ToolCall:
    """One function call the model asked for. ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@attrs.frozen
class Message:
    """One chat message in OpenAI chat-completions shape, minus the wire details.

    ``reasoning_details`` holds the provider's reasoning blocks as raw JSON text,
    kept byte for byte because providers reject altered reasoning on the way back.
    A tool message answers exactly one call, named by ``tool_call_id``.
    """

    role: Role
    text: str = ""
    reasoning: str = ""
    reasoning_details: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""
    tool_name: str = ""
    is_error: bool = False
    kind: MessageKind = ""


@attrs.frozen
class Usage:
    """Tokens (and cost, where reported) of one model call."""

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None
    provider: str = ""
    # Tokens written to the provider's prompt cache by this call (billed above the input rate).
    cache_write_tokens: int = 0
    # With the user's own provider key (`is_byok`), OpenRouter's `cost` is only its fee; this is
    # what the upstream provider charged (cost_details.upstream_inference_cost). None otherwise.
    upstream_cost: float | None = None


@attrs.frozen
class Session:
    """A conversation's metadata, as listed by ``seri sessions``.

    Times are seconds since the epoch; the caller reads the clock, not this record.
    """

    id: str
    project: str
    created: float
    updated: float
    model: str
    title: str
    messages: int
    parent_id: str = ""


def user(text: str, kind: MessageKind = "") -> Message:
    return Message(role="user", text=text, kind=kind)


def system(text: str) -> Message:
    return Message(role="system", text=text)


def assistant(text: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> Message:
    return Message(role="assistant", text=text, tool_calls=tool_calls)


def tool_result(call: ToolCall, text: str, *, is_error: bool = False) -> Message:
    return Message(
        role="tool", text=text, tool_call_id=call.id, tool_name=call.name, is_error=is_error
    )
