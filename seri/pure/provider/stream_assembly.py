"""Assembling a chat-completions stream: the decoded chunks into one assistant message.

``StreamAssembler`` turns the chunks ``sse.SSEParser`` framed into an assistant ``Message``
plus what is needed to judge it: did the stream finish, how, with what usage, and can its tool
calls be trusted enough to run. ``assemble_completion`` does the same for a non-streamed body.

A stream that stops early must never pass for a finished one (provider-protocol.md §1.4: the
official SDKs raise nothing when a stream ends without ``finish_reason`` or ``[DONE]``), and a
tool call whose arguments were cut off must never run: it would act on half an instruction.

Reading a delta's fields is ``delta_parts``'s; reading the usage, ``reported_usage``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.provider.delta_parts import (
    HIGH_SURROGATE,
    content_parts,
    details_text,
    mapping_or_empty,
    reasoning_text,
    text_or_empty,
    whole_characters,
)
from seri.pure.provider.provider_errors import (
    classify_stream_error,
    malformed_response,
    stream_interrupted,
)
from seri.pure.provider.provider_failure import ProviderFailure
from seri.pure.provider.reported_usage import usage_from
from seri.pure.provider.sse import DONE, SSEDone, SSEEvent
from seri.pure.session.records import Message, ToolCall, Usage

# Finish reasons after which the model's tool calls are not whole, or not meant: "length" can
# stop mid-arguments, "content_filter" cut the output, "error" ended the stream.
_UNTRUSTED_FINISH = frozenset({"length", "content_filter", "error"})


@attrs.frozen
class StreamDelta:
    """What one chunk added that a person may watch arrive (a refusal arrives as text)."""

    text: str = ""
    reasoning: str = ""


@attrs.frozen
class StreamResult:
    """A whole model answer, or as much of it as arrived, and whether it can be trusted.

    ``message`` is the assistant message with every tool call received, including unfinished
    ones, so that the trajectory keeps the raw arguments. Run them only if
    ``tool_calls_runnable``; otherwise answer each with an error result (the pairing invariant
    still holds) citing ``unrunnable_reason``.

    ``complete`` means the stream finished properly: a finish reason or ``[DONE]`` arrived and
    no error did. ``failure`` says what went wrong otherwise (an error event, a cut, a stall).
    """

    message: Message
    finish_reason: str = ""
    usage: Usage | None = None
    complete: bool = False
    done: bool = False
    failure: ProviderFailure | None = None
    tool_calls_runnable: bool = False
    unrunnable_reason: str = ""
    model: str = ""
    generation_id: str = ""
    # The model declined (``delta.refusal``); the same words are in ``message.text``.
    refusal: str = ""


@attrs.define
class _CallParts:
    """A tool call being put together from its fragments."""

    id: str = ""
    name: str = ""
    arguments: list[str] = attrs.field(factory=list)


class StreamAssembler:
    """Accumulates the chunks of one streamed chat completion.

    Feed it decoded chunks (``feed``) or raw SSE events (``feed_event``); ask for ``result()``
    when the stream is over, however it ended. Tool-call fragments are merged by ``index``
    (falling back to ``id``, then position): ``id`` and ``name`` are taken the first time they
    appear, ``arguments`` pieces are concatenated. A call that never got an id is given
    ``f"{id_prefix}{index}"`` so that its result can still be paired with it.
    """

    def __init__(self, id_prefix: str = "call_") -> None:
        self._id_prefix = id_prefix
        self._text: list[str] = []
        self._refusal: list[str] = []
        self._held_surrogate = ""
        self._reasoning: list[str] = []
        self._details: list[str] = []
        self._details_reasoning: list[str] = []
        self._calls: dict[tuple[str, object], _CallParts] = {}
        self._finish = ""
        self._done = False
        self._usage_raw: Mapping[str, Any] | None = None
        self._provider = ""
        self._model = ""
        self._generation_id = ""
        self._failure: ProviderFailure | None = None
        self.data_events = 0

    @property
    def delivered(self) -> bool:
        """Any of the answer arrived (text, refusal, reasoning, a tool call): a request that
        failed after this must not be sent again, since part of it was shown or acted on."""
        return bool(self._text or self._refusal or self._reasoning or self._details or self._calls)

    @property
    def failed(self) -> bool:
        """An error event arrived: nothing after it belongs to this answer."""
        return self._failure is not None

    @property
    def finished(self) -> bool:
        """``[DONE]`` arrived, or an error ended the stream: stop reading."""
        return self._done or self._failure is not None

    def feed_event(self, event: SSEEvent | SSEDone) -> StreamDelta:
        """Take one SSE event: ``[DONE]``, an ``error:`` field, or a data payload."""
        if isinstance(event, SSEDone):
            self._done = True
            return StreamDelta()
        self.data_events += 1
        if event.event == "error":
            self._fail(classify_stream_error(event.data, self._provider))
            return StreamDelta()
        try:
            chunk = json_text.loads_lenient_numbers(event.data)
        except ValueError as exc:
            self._fail(
                malformed_response(f"a stream chunk is not JSON ({exc}): {event.data[:120]!r}")
            )
            return StreamDelta()
        if not isinstance(chunk, Mapping):
            self._fail(malformed_response(f"a stream chunk is not an object: {event.data[:120]!r}"))
            return StreamDelta()
        return self.feed(chunk)

    def feed(self, chunk: Mapping[str, Any]) -> StreamDelta:
        """Take one decoded ``chat.completion.chunk``; return the text and reasoning it added."""
        self._note_metadata(chunk)
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            self._usage_raw = usage
        if chunk.get("object") == "error":
            # vLLM's unwrapped error: {"object": "error", "message": ..., "code": 400}.
            self._fail(classify_stream_error(chunk, self._provider))
            return StreamDelta()
        choices = chunk.get("choices")
        # The usage chunk has `choices: []`: never index it blindly.
        choice = mapping_or_empty(choices[0]) if isinstance(choices, list) and choices else {}
        if self._usage_raw is None and isinstance(choice.get("usage"), Mapping):
            # Moonshot sends usage inside the choice that finishes, not beside it.
            self._usage_raw = choice["usage"]
        delta = self._take_delta(mapping_or_empty(choice.get("delta")))
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and finish:
            self._finish = finish
        error = chunk.get("error")
        if error is not None:
            self._fail(classify_stream_error(error, self._provider))
        elif self._finish == "error":
            self._fail(classify_stream_error(mapping_or_empty(choice.get("error")), self._provider))
        return delta

    def _note_metadata(self, chunk: Mapping[str, Any]) -> None:
        for key, attr in (("provider", "_provider"), ("model", "_model"), ("id", "_generation_id")):
            value = chunk.get(key)
            if isinstance(value, str) and value and not getattr(self, attr):
                setattr(self, attr, value)

    def _take_delta(self, delta: Mapping[str, Any]) -> StreamDelta:
        text, thinking = content_parts(delta.get("content"))
        refusal = text_or_empty(delta.get("refusal"))
        if refusal:
            # The model declined: its words are the answer, shown and stored like text.
            self._refusal.append(refusal)
            text += refusal
        if text:
            self._text.append(text)
            # A character outside the BMP may come as a surrogate pair split across two
            # chunks: the first half waits for the second before it is shown.
            text = self._held_surrogate + text
            self._held_surrogate = ""
            if HIGH_SURROGATE.match(text[-1]):
                text, self._held_surrogate = text[:-1], text[-1]
            text = whole_characters(text)
        reasoning = reasoning_text(delta) or thinking
        if reasoning:
            self._reasoning.append(reasoning)
        details = delta.get("reasoning_details")
        if isinstance(details, list) and details:
            # Kept item by item exactly as received: providers reject altered reasoning.
            self._details.extend(json_text.dump_json(item) for item in details)
            # Most backends repeat the detail text as plain `reasoning`; only those that don't
            # have their reasoning read from the details, so it is never shown twice.
            from_details = details_text(details)
            self._details_reasoning.append(from_details)
            if not self._reasoning:
                reasoning = from_details
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for position, fragment in enumerate(calls):
                self._take_fragment(position, mapping_or_empty(fragment))
        return StreamDelta(text=text, reasoning=reasoning)

    def _take_fragment(self, position: int, fragment: Mapping[str, Any]) -> None:
        function = mapping_or_empty(fragment.get("function"))
        call_id, name = text_or_empty(fragment.get("id")), text_or_empty(function.get("name"))
        index = fragment.get("index")
        if isinstance(index, int) and not isinstance(index, bool):
            key: tuple[str, object] = ("index", index)
            known = self._calls.get(key)
            # Some backends number every call 0 but send each whole, with its own id and name.
            if known is not None and known.id and call_id and call_id != known.id and name:
                key = ("index", (index, len(self._calls)))
        elif call_id:
            key = ("id", call_id)
        else:
            key = ("position", position)
        parts = self._calls.setdefault(key, _CallParts())
        if call_id and not parts.id:
            parts.id = call_id
        if name and not parts.name:
            parts.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            parts.arguments.append(arguments)
        elif isinstance(arguments, Mapping):
            # Ollama-style: the arguments as an object rather than JSON text.
            parts.arguments.append(json_text.dump_json(arguments))

    def _fail(self, failure: ProviderFailure) -> None:
        if self._failure is None:
            self._failure = failure

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls, each with an id of its own.

        A provider that gives two calls one id would make every later request invalid (each
        result must answer exactly one call), so a repeated id is renamed (``id~2``); the
        repeat itself is noted in ``duplicate_ids`` and makes the calls unrunnable.
        """
        calls: list[ToolCall] = []
        used: set[str] = set()
        for number, parts in enumerate(self._calls.values()):
            call_id = parts.id or f"{self._id_prefix}{number}"
            unique, copy = call_id, 1
            while unique in used:
                copy += 1
                unique = f"{call_id}~{copy}"
            used.add(unique)
            calls.append(ToolCall(id=unique, name=parts.name, arguments="".join(parts.arguments)))
        return tuple(calls)

    def duplicate_ids(self) -> tuple[str, ...]:
        """Call ids the provider used for more than one call, in order of first repeat."""
        seen: set[str] = set()
        repeated: list[str] = []
        for parts in self._calls.values():
            if parts.id and parts.id in seen and parts.id not in repeated:
                repeated.append(parts.id)
            seen.add(parts.id)
        return tuple(repeated)

    def result(self, failure: ProviderFailure | None = None) -> StreamResult:
        """The answer so far. ``failure`` is how the transport ended it, if it did not end well
        (cut, stalled); an error event already seen takes precedence."""
        failure = self._failure or failure
        finished_properly = bool(self._finish) or self._done
        if failure is None and not finished_properly:
            failure = stream_interrupted("no finish reason and no [DONE]")
        complete = failure is None
        calls = self.tool_calls()
        runnable, reason = self._runnable(calls, complete, failure)
        message = Message(
            role="assistant",
            text=whole_characters("".join(self._text)),
            reasoning=whole_characters("".join(self._reasoning or self._details_reasoning)),
            reasoning_details=f"[{','.join(self._details)}]" if self._details else "",
            tool_calls=calls,
        )
        usage = None if self._usage_raw is None else usage_from(self._usage_raw, self._provider)
        return StreamResult(
            message=message,
            finish_reason=self._finish,
            usage=usage,
            complete=complete,
            done=self._done,
            failure=failure,
            tool_calls_runnable=runnable,
            unrunnable_reason=reason,
            model=self._model,
            generation_id=self._generation_id,
            refusal="".join(self._refusal),
        )

    def _runnable(
        self, calls: tuple[ToolCall, ...], complete: bool, failure: ProviderFailure | None
    ) -> tuple[bool, str]:
        if not calls:
            return False, ""
        if not complete:
            why = failure.message if failure is not None else "the stream did not finish"
            return False, f"the response did not finish ({why}), so its tool calls may be cut off"
        if self._finish in _UNTRUSTED_FINISH:
            return False, (
                f"the response stopped with finish_reason {self._finish!r}, "
                "so its tool calls may be cut off"
            )
        repeated = self.duplicate_ids()
        if repeated:
            shown = ", ".join(repr(call_id) for call_id in repeated)
            return False, (
                f"the response gave more than one tool call the id {shown}, so which result "
                "answers which call cannot be told; ask again with one id per call"
            )
        return True, ""


def assemble_completion(body: Mapping[str, Any], id_prefix: str = "call_") -> StreamResult:
    """The same result for a non-streaming ``chat.completion`` body.

    Its ``message`` is fed through the assembler as if it were one big delta, so both paths
    agree on every rule (tool-call ids, reasoning fields, errors, finish reasons).
    """
    assembler = StreamAssembler(id_prefix)
    choices = body.get("choices")
    choice = mapping_or_empty(choices[0]) if isinstance(choices, list) and choices else {}
    message = dict(mapping_or_empty(choice.get("message")))
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        message["tool_calls"] = [
            {"index": n, **mapping_or_empty(call)} for n, call in enumerate(calls)
        ]
    chunk: dict[str, Any] = {key: value for key, value in body.items() if key != "choices"}
    chunk["choices"] = [{**choice, "delta": message}]
    if choice.get("error") is not None and "error" not in chunk:
        chunk["error"] = choice["error"]
    assembler.feed(chunk)
    if not choice and "error" not in chunk and body.get("object") != "error":
        return assembler.result(malformed_response("the response has no choices"))
    # A whole body arrived, so nothing was cut: it counts as a stream that reached [DONE].
    assembler.feed_event(DONE)
    return assembler.result()
