"""Records to JSON and back, at the edge: the store and the export speak this.

Defaults are omitted, so a plain user message is stored as
``{"role":"user","text":"hi"}`` and the body column stays small.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.session.records import Message, ToolCall, Usage

if TYPE_CHECKING:
    import cattrs

# Message's fields with their defaults, in order: what message_to_dict leaves out.
_MESSAGE_DEFAULTS = tuple((field.name, field.default) for field in attrs.fields(Message))


@functools.cache
def _converter() -> cattrs.Converter:
    """cattrs, for reading a body that is not in the shape seri writes (loaded only then:
    importing it cost a tenth of `seri chat -p`'s start-up)."""
    import cattrs
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

    converter = cattrs.Converter()
    for cls in (Message, ToolCall, Usage):
        converter.register_unstructure_hook(
            cls, make_dict_unstructure_fn(cls, converter, _cattrs_omit_if_default=True)
        )
        converter.register_structure_hook(cls, make_dict_structure_fn(cls, converter))
    return converter


def message_to_dict(message: Message) -> dict[str, Any]:
    """The message's fields that differ from their defaults, in order (tool calls as
    ``{"id", "name", "arguments"}``); what cattrs' omit-if-default unstructuring gives."""
    result: dict[str, Any] = {}
    for name, default in _MESSAGE_DEFAULTS:
        value = getattr(message, name)
        if value == default:
            continue
        if name == "tool_calls":
            value = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in value]
        result[name] = value
    return result


def message_from_dict(data: dict[str, Any]) -> Message:
    return _converter().structure(data, Message)


def message_to_json(message: Message) -> str:
    """Compact JSON, UTF-8 where possible.

    A lone surrogate (a model or an old file can send ``"\\ud83d"`` alone) cannot
    be stored as UTF-8; then the text is escaped as ASCII, which round-trips exactly.
    """
    data = message_to_dict(message)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text


# Resuming a long session decodes every stored message: the scanner skips
# json.loads' per-call dispatch, and building the records directly skips cattrs'
# generic path. Bodies are ours (written by message_to_json), so their shape is
# known; anything unexpected falls back to the checked cattrs path.
_scan_once: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def message_from_json(text: str) -> Message:
    try:
        data, end = _scan_once(text, 0)
    except StopIteration as exc:
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None
    if end != len(text) or not isinstance(data, dict):
        return message_from_dict(json_text.loads_stored(text))
    calls = data.get("tool_calls")
    try:
        if calls is not None:
            data["tool_calls"] = tuple(ToolCall(**call) for call in calls)
        return Message(**data)
    except TypeError:
        return message_from_dict(json_text.loads_stored(text))
