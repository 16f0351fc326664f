"""Messages to and from the chat-completions wire format, and the request body around them.

The body follows OpenRouter's ``ChatRequest`` schema (tests validate every body against it) and
stays plain OpenAI chat-completions otherwise, so vLLM, llama.cpp and Ollama accept it too.

Two wire rules cause most permanent 400s, so they are enforced here rather than hoped for:
every assistant tool call is answered exactly once by the tool messages right after it, and
reasoning blocks go back exactly as the provider sent them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from seri.pure.inputs import json_text
from seri.pure.inputs.json_text import dump_json
from seri.pure.inputs.lone_surrogates import replace_lone_surrogates
from seri.pure.provider.prompt_cache import EPHEMERAL
from seri.pure.session.records import Message, ToolCall

# Keys ``build_request`` sets itself; a sampling setting must not quietly replace them.
_RESERVED = frozenset(
    {"model", "messages", "tools", "stream", "stream_options", "provider", "reasoning", "plugins"}
)


# --- messages --------------------------------------------------------------------------------


# A JSON escape of a UTF-16 surrogate half: in a call's arguments it may stand alone.
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def wire_text(text: str) -> str:
    """``text`` as a provider can take it: a lone UTF-16 surrogate becomes U+FFFD.

    The store keeps a lone surrogate as it came (escaped), but a request body carrying one,
    raw or as a ``\\udXXX`` escape, is refused by some providers for good (Anthropic: 400
    "no low surrogate in string"). A pair of halves becomes the one character it encodes.
    """
    return replace_lone_surrogates(text)


def _holds_lone_surrogate(value: object) -> bool:
    if isinstance(value, str):
        return wire_text(value) != value
    if isinstance(value, dict):
        return any(_holds_lone_surrogate(k) or _holds_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_lone_surrogate(item) for item in value)
    return False


def wire_utf8(body_json: str) -> bytes:
    """A request body's JSON text (written with ``ensure_ascii=False``) as the bytes sent.

    Encoded once on every model call (the body holds the whole history): only a body that
    does not encode is repaired and encoded again."""
    try:
        return body_json.encode("utf-8")
    except UnicodeEncodeError:
        return replace_lone_surrogates(body_json).encode("utf-8")


def wire_arguments(arguments: str) -> str:
    """A call's arguments as sent back to a provider: JSON text of an object, else ``{}``.

    Arguments a model sent that are not a JSON object (cut off, malformed, a bare string) stay
    in the store as they came, but providers expect an object: Anthropic refuses anything else,
    llama.cpp answers 500 to every request that carries them. The call was never run; its
    result says why.
    """
    if arguments.startswith("{"):
        try:
            parsed = json_text.loads(arguments)
        except (ValueError, RecursionError):
            return "{}"
        if not isinstance(parsed, dict):
            return "{}"
        if _ESCAPED_SURROGATE.search(arguments) and _holds_lone_surrogate(parsed):
            # Written back unescaped, so that wire_utf8 replaces the lone half.
            return json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))
        return arguments
    return "{}"


def _wire_tool_call(call: ToolCall) -> dict[str, Any]:
    # `arguments` is JSON *text* on the wire, never an object.
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": wire_arguments(call.arguments)},
    }


def _reasoning_details(raw: str) -> list[Any]:
    details = json_text.loads_stored(raw)
    if not isinstance(details, list):
        raise TypeError("reasoning_details must be a JSON array")
    return details


def _wire_assistant(message: Message, reasoning_content: bool) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant"}
    # An assistant turn that only calls tools has null content, as the providers send it.
    wire["content"] = message.text if message.text or not message.tool_calls else None
    if message.tool_calls:
        wire["tool_calls"] = [_wire_tool_call(call) for call in message.tool_calls]
    if message.reasoning:
        wire["reasoning"] = message.reasoning
        if reasoning_content:
            # DeepSeek reads the reasoning of a tool loop back only under this name.
            wire["reasoning_content"] = message.reasoning
    if message.reasoning_details:
        wire["reasoning_details"] = _reasoning_details(message.reasoning_details)
    return wire


def wants_reasoning_content(model: str) -> bool:
    """DeepSeek's API takes reasoning back as ``reasoning_content`` (OpenRouter: ``reasoning``)."""
    return "deepseek" in model.lower()


def to_wire_message(
    message: Message,
    *,
    cache_marker: bool = False,
    reasoning_content: bool = False,
    text_parts: bool = False,
) -> dict[str, Any]:
    """One ``Message`` as a chat-completions message object.

    ``cache_marker`` sends the text as one content part carrying a prompt-cache breakpoint
    (``seri.pure.provider.prompt_cache``); ``reasoning_content`` repeats the reasoning under
    DeepSeek's name. ``text_parts`` sends the text as one content part even without a marker: a
    request to a model that gets markers sends every user, system and tool text that way, so that a
    marker moving on or off a message adds or removes the marker and changes nothing else of
    it (a plain string would become a list and back).
    """
    if message.role == "assistant":
        return _wire_assistant(message, reasoning_content)
    content: Any = message.text
    if (cache_marker or text_parts) and message.text:
        part: dict[str, Any] = {"type": "text", "text": message.text}
        if cache_marker:
            part["cache_control"] = dict(EPHEMERAL)
        content = [part]
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    return {"role": message.role, "content": content}


def has_content(message: Message) -> bool:
    """False for an assistant message with neither text nor tool calls: what is kept of an
    answer that failed while still reasoning. It stays in the store but is not sent: providers
    refuse an empty assistant turn, and cut reasoning cannot be signed."""
    return message.role != "assistant" or bool(message.text or message.tool_calls)


def to_wire_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """A history as the ``messages`` array of a request."""
    return [to_wire_message(message) for message in messages if has_content(message)]


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _from_wire_tool_call(raw: Mapping[str, Any]) -> ToolCall:
    function = raw.get("function") or {}
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = dump_json(arguments)
    return ToolCall(
        id=str(raw.get("id", "")), name=str(function.get("name", "")), arguments=arguments
    )


def from_wire_messages(wire: Sequence[Mapping[str, Any]]) -> tuple[Message, ...]:
    """The inverse of ``to_wire_messages``, for requests read back from logs and fixtures.

    The wire does not carry ``kind`` or ``is_error``; a tool message's ``tool_name`` is
    recovered from the call it answers.
    """
    names: dict[str, str] = {}
    messages: list[Message] = []
    for raw in wire:
        role = raw.get("role")
        text = _content_text(raw.get("content"))
        if role == "assistant":
            calls = tuple(_from_wire_tool_call(call) for call in raw.get("tool_calls") or ())
            names.update((call.id, call.name) for call in calls)
            details = raw.get("reasoning_details")
            reasoning = raw.get("reasoning")
            messages.append(
                Message(
                    role="assistant",
                    text=text,
                    reasoning=reasoning if isinstance(reasoning, str) else "",
                    reasoning_details=dump_json(details) if details else "",
                    tool_calls=calls,
                )
            )
        elif role == "tool":
            call_id = str(raw.get("tool_call_id", ""))
            messages.append(
                Message(
                    role="tool", text=text, tool_call_id=call_id, tool_name=names.get(call_id, "")
                )
            )
        elif role in ("system", "user"):
            messages.append(Message(role=role, text=text))
        elif role == "developer":
            messages.append(Message(role="system", text=text))
        else:
            raise ValueError(f"unknown message role on the wire: {role!r}")
    return tuple(messages)


# --- the request body ------------------------------------------------------------------------


def wire_tool(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A tool definition as the request's ``tools`` entry.

    Takes ``{"name", "description", "parameters"}`` or an entry already in wire form
    (``{"type": "function", "function": {...}}``), which passes through unchanged.
    """
    if spec.get("type") == "function" and "function" in spec:
        return dict(spec)
    function: dict[str, Any] = {"name": spec["name"]}
    if spec.get("description"):
        function["description"] = spec["description"]
    function["parameters"] = dict(spec.get("parameters") or {"type": "object", "properties": {}})
    return {"type": "function", "function": function}


def build_request(
    model: str,
    messages: Sequence[Message],
    tools: Sequence[Mapping[str, Any]] = (),
    *,
    sampling: Mapping[str, Any] | None = None,
    provider_pin: Mapping[str, Any] | None = None,
    reasoning_effort: str | None = None,
    stream: bool = True,
    compress_overflow: bool = False,
) -> dict[str, Any]:
    """The JSON body of one ``POST /chat/completions``.

    ``sampling`` holds the knobs passed through as top-level keys (temperature, top_p,
    max_tokens, seed, ...). ``provider_pin`` becomes OpenRouter's ``provider`` routing object.
    ``tools`` must be sent on every request of a tool conversation, results included (OpenRouter
    validates them each time), so an empty ``tools`` simply leaves the key out.

    OpenRouter silently middle-truncates prompts too long for endpoints of 8k context or less;
    unless ``compress_overflow``, the body turns that off so an overflow is reported, not hidden.
    """
    sampling = sampling or {}
    clash = sorted(_RESERVED & sampling.keys())
    if clash:
        raise ValueError(f"sampling settings may not set {', '.join(clash)}")
    body: dict[str, Any] = {"model": model, "messages": to_wire_messages(messages)}
    if tools:
        body["tools"] = [wire_tool(tool) for tool in tools]
    body.update(sampling)
    if provider_pin:
        body["provider"] = dict(provider_pin)
    if reasoning_effort:
        body["reasoning"] = {"effort": reasoning_effort}
    if not compress_overflow:
        body["plugins"] = [{"id": "context-compression", "enabled": False}]
    body["stream"] = stream
    if stream:
        # OpenRouter always reports usage; OpenAI and vLLM only when asked.
        body["stream_options"] = {"include_usage": True}
    return body
