"""The model port of a real run: builds each request body and calls the provider.

The body is built once per call from the settings and the effect (``seri.pure.provider.wire``); the
messages are spliced in from a cache of their wire JSON, so a call's own cost stays the
encoding of its new messages. Every failure comes back as a ``ModelFailed`` value.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from seri.pure.agent.effects import CallModel, ModelFailed, ModelReply
from seri.pure.agent.turn import cut_answer
from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.inputs.settings import Settings
from seri.pure.provider.output_budget import OutputBudget
from seri.pure.session.records import Message
from seri.pure.terminal.terminal_text import neutralise
from seri.pure.tools.tool_specs import ToolSpec
from seri.pure.trajectories.events import RetryEvent
from seri.runtime.agent.ports import RecorderPort

if TYPE_CHECKING:
    # The client and the assembler load on the first call: start-up does not wait.
    from seri.io.provider.provider import ProviderClient
    from seri.pure.provider.provider_failure import ProviderFailure
    from seri.pure.provider.stream_assembly import StreamResult


class WireCache:
    """Each message's wire JSON, encoded once.

    Between compactions the history only grows, so re-encoding every message for every
    call would make each call cost more than the last; this keeps seri's own part of a
    call to encoding the new messages and joining the rest.

    An entry is keyed by the message's identity and whether it carries a prompt-cache
    marker, and holds the message so its id cannot be reused while the entry lives. The
    moving marker (on the newest user or tool message) is encoded afresh for its one call
    and not kept: the next call sends that message unmarked, from the cache. With
    ``text_parts`` (the models that get markers) every text goes as a one-part list, so the
    marked and the unmarked forms of a message differ by the marker alone.
    """

    def __init__(self, *, reasoning_content: bool = False, text_parts: bool = False) -> None:
        self._entries: dict[tuple[int, bool], tuple[Message, str]] = {}
        self._reasoning_content = reasoning_content
        self._text_parts = text_parts

    def _encode(self, message: Message, *, marker: bool) -> str:
        from seri.pure.provider.wire import to_wire_message

        wire = to_wire_message(
            message,
            cache_marker=marker,
            reasoning_content=self._reasoning_content,
            text_parts=self._text_parts,
        )
        return json.dumps(wire, ensure_ascii=False, separators=(",", ":"))

    def _cached(self, message: Message, *, marker: bool) -> str:
        key = (id(message), marker)
        hit = self._entries.get(key)
        if hit is None or hit[0] is not message:
            hit = self._entries[key] = (message, self._encode(message, marker=marker))
        return hit[1]

    def encoded(
        self, messages: Sequence[Message], marked: frozenset[int] = frozenset()
    ) -> list[str]:
        """Each sendable message's JSON, in order. Those at ``marked`` carry a prompt-cache
        breakpoint: the system prompt's (index 0) never moves and is cached like the rest;
        the moving one is encoded for this call only."""
        from seri.pure.provider.wire import has_content

        parts = []
        for index, message in enumerate(messages):
            if not has_content(message):
                continue
            marker = index in marked
            if marker and index > 0:
                parts.append(self._encode(message, marker=True))
            else:
                parts.append(self._cached(message, marker=marker))
        if len(self._entries) > 2 * len(messages) + 64:
            # After a compaction: forget the evicted messages. (Not every message has an
            # entry: one with nothing to send, or one only ever sent with the moving marker.)
            live = {id(message) for message in messages}
            self._entries = {key: entry for key, entry in self._entries.items() if key[0] in live}
        return parts

    def join(self, messages: Sequence[Message], marked: frozenset[int] = frozenset()) -> str:
        """The messages' JSON, comma-joined (see ``encoded``)."""
        return ",".join(self.encoded(messages, marked))


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)


class ModelCaller:
    """Builds the request body and calls the provider; the client is created on first use."""

    def __init__(
        self,
        settings: Settings,
        api_key: str,
        events: RecorderPort,
        tools: tuple[ToolSpec, ...],
        *,
        deferred: bool = False,
        on_text: Callable[[str], None] | None = None,
        on_reasoning: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.api_key = api_key
        self.events = events
        self.tools = tools
        self.deferred = deferred
        self.on_text = on_text
        self.on_reasoning = on_reasoning
        # Where a retry is said: stderr, or the chat's view (which first wipes its spinner).
        self.notice: Callable[[str], None] = _to_stderr
        self._client: ProviderClient | None = None
        self.usage = UsageTotals()
        self.cache_markers_sent = 0
        from seri.pure.provider.prompt_cache import needs_cache_markers
        from seri.pure.provider.wire import wants_reasoning_content

        self._wire = WireCache(
            reasoning_content=wants_reasoning_content(settings.model),
            text_parts=needs_cache_markers(settings.model),
        )
        self._system: Message | None = None

    def offer(self, tools: tuple[ToolSpec, ...], deferred: bool) -> None:
        """The tools turn requests carry from now on (a chat's MCP tools change between tasks)."""
        self.tools, self.deferred = tools, deferred

    def client(self) -> ProviderClient:
        if self._client is None:
            from seri.io.provider.provider import ProviderClient

            self._client = ProviderClient(
                self.settings.base_url,
                self.api_key,
                on_retry=self._on_retry,
                title="seri",
            )
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _on_retry(self, attempt: int, status: int | None, delay: float, reason: str) -> None:
        self.events.record(
            RetryEvent(attempt=attempt, status=status, delay=round(delay, 3), reason=reason)
        )
        if status is None:
            reason = self.naming_the_url(reason)
        self.notice(
            neutralise(f"seri: {reason}; retrying in {delay:.1f} s (attempt {attempt + 1})")
        )

    def naming_the_url(self, message: str) -> str:
        """A connection failure with the URL called and the setting that chose it."""
        settings = self.settings
        where = f"{settings.base_url} ({settings.base_url_source})"
        lead = "could not reach the provider"
        if message.startswith(lead):
            return f"{lead} at {where}{message[len(lead) :]}"
        return f"{message} ({where})"

    def body(self, effect: CallModel) -> dict[str, Any]:
        from seri.pure.provider.wire import build_request
        from seri.pure.tools.tool_definitions import definitions

        messages = effect.messages
        tools: tuple[dict[str, Any], ...] = ()
        if effect.purpose == "turn":
            if effect.system_prompt:
                messages = (Message(role="system", text=effect.system_prompt), *messages)
            tools = definitions(self.tools, self.deferred)
        sampling = self.settings.sampling
        if effect.max_tokens is not None:
            # The loop lowered the answer budget (see seri.pure.provider.output_budget).
            sampling = {**sampling, OutputBudget.of(sampling).key: effect.max_tokens}
        return build_request(
            self.settings.model,
            messages,
            tools,
            sampling=sampling,
            provider_pin=self.settings.provider,
            reasoning_effort=self.settings.reasoning_effort or None,
        )

    def encoded_body(self, effect: CallModel) -> bytes:
        """The same body as ``body``, with the messages spliced in from the wire cache."""
        from seri.pure.provider.wire import wire_utf8

        if effect.purpose == "summary":
            # A one-off request: caching its two messages would only evict the turn's.
            whole = json.dumps(self.body(effect), ensure_ascii=False, separators=(",", ":"))
            return wire_utf8(whole)
        head = self.body(attrs.evolve(effect, messages=(), system_prompt=""))
        head.pop("messages", None)
        messages = effect.messages
        if effect.purpose == "turn" and effect.system_prompt:
            messages = (self._system_message(effect.system_prompt), *messages)
        from seri.pure.provider.prompt_cache import breakpoints

        marked = breakpoints(self.settings.model, messages)
        self.cache_markers_sent += len(marked)
        rest = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
        text = '{"messages":[' + self._wire.join(messages, marked) + "]," + rest[1:]
        return wire_utf8(text)

    def _system_message(self, prompt: str) -> Message:
        if self._system is None or self._system.text != prompt:
            self._system = Message(role="system", text=prompt)
        return self._system

    def call(self, effect: CallModel) -> ModelReply | ModelFailed:
        on_text = self.on_text if effect.purpose == "turn" else None
        try:
            outcome = self.client().stream_chat(
                self.encoded_body(effect), on_text, on_reasoning=self.on_reasoning
            )
        except KeyboardInterrupt:
            return ModelFailed(
                "interrupted by user while the model was answering", interrupted=True, by_user=True
            )
        from seri.pure.provider.provider_failure import (
            ProviderFailure,  # loaded while the answer comes
        )

        if isinstance(outcome, ProviderFailure):
            return self.refused(outcome)
        self.usage = self.usage.add(outcome.usage)
        if not outcome.complete:
            return self.cut(outcome)
        return ModelReply(
            outcome.message,
            outcome.usage,
            outcome.finish_reason,
            outcome.tool_calls_runnable,
            outcome.unrunnable_reason,
            model=outcome.model,
            generation_id=outcome.generation_id,
            refusal=outcome.refusal,
        )

    def refused(self, failure: ProviderFailure) -> ModelFailed:
        """Refused before any of an answer arrived: what the provider said goes back whole,
        for the loop to decide whether a smaller output budget would do."""
        error = failure.message
        if failure.kind == "connection":
            error = self.naming_the_url(error)
        overflow = failure.kind == "context_overflow"
        return ModelFailed(
            error,
            overflow=overflow,
            overflow_numbers=failure.overflow if overflow else None,
            refused=failure,
        )

    @staticmethod
    def cut(result: StreamResult) -> ModelFailed:
        """An answer that started and stopped before its end: what arrived is kept."""
        failure = result.failure
        if failure is None:
            return ModelFailed(
                "the answer stopped before its end",
                partial=cut_answer(result.message),
                usage=result.usage,
            )
        if failure.kind == "context_overflow":
            return ModelFailed(failure.message, overflow=True, overflow_numbers=failure.overflow)
        return ModelFailed(
            failure.message,
            # A cut or stalled stream is a failed turn (status `error`, exit 1), not an
            # interruption: only the person or a signal interrupts (exit 130 or 143).
            partial=cut_answer(result.message),
            usage=result.usage,
        )
