"""JSON-RPC 2.0 as MCP uses it: messages to send, and what a received one turns out to be.

On stdio each message is one line of compact JSON (the spec forbids raw line breaks inside a
message; ``json.dumps`` escapes every control character, so none can appear). What arrives is
classified, never trusted: a line that is not JSON, a batch (allowed by 2025-03-26), a response
without an id, a server's own request: each comes out as a record the client can act on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import MCP_STDIO, BoundedInputError, InputLimits

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = int | str


@attrs.frozen
class Response:
    """A result for request ``id``."""

    id: RequestId
    result: Mapping[str, Any]


@attrs.frozen
class ErrorResponse:
    """An error for request ``id`` (``None`` when the peer could not read the request)."""

    id: RequestId | None
    code: int
    message: str
    data: Any = None


@attrs.frozen
class Notification:
    method: str
    params: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ServerRequest:
    """The peer asks something of us (``ping``, ``roots/list``, ``elicitation/create``)."""

    id: RequestId
    method: str
    params: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Unreadable:
    """Something arrived that is not a JSON-RPC message; ``sample`` is its start, for errors.
    ``over_limit``: it may well have been one, but over seri's bounds (too big, too deep), so
    whichever request it answered will get no other answer."""

    reason: str
    sample: str = ""
    over_limit: bool = False


Incoming = Response | ErrorResponse | Notification | ServerRequest | Unreadable

_SAMPLE = 200


def encode(message: Mapping[str, Any]) -> bytes:
    """One message as a line of UTF-8 JSON, newline included."""
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def request(request_id: RequestId, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def notification(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


def result_response(request_id: RequestId, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": dict(result)}


def error_response(request_id: RequestId, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def decode_line(line: bytes | str, limits: InputLimits = MCP_STDIO) -> tuple[Incoming, ...]:
    """What one received line holds: one message, several (a batch), or an ``Unreadable``.

    A blank line holds nothing. A line over ``limits`` (its size, its depth) is not parsed.
    """
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    if not text.strip():
        return ()
    try:
        value = json_text.loads_bounded(text, limits)
    except BoundedInputError as exc:
        return (Unreadable(exc.reason, _sample(text), over_limit=True),)
    except ValueError:
        return (Unreadable("not JSON", _sample(text)),)
    return decode_value(value, text)


def decode_value(value: object, text: str = "") -> tuple[Incoming, ...]:
    """The messages in an already parsed JSON value (an HTTP body, an SSE event's data)."""
    if isinstance(value, list):
        if not value:
            return (Unreadable("an empty batch", _sample(text)),)
        return tuple(classify(item) for item in value)
    return (classify(value),)


def classify(value: object) -> Incoming:
    """What one JSON value is, as a message."""
    if not isinstance(value, Mapping):
        return Unreadable("not a JSON object", _sample(json.dumps(value)[:_SAMPLE]))
    message_id = value.get("id")
    has_id = _valid_id(message_id)
    method = value.get("method")
    if isinstance(method, str):
        params = value.get("params")
        params = params if isinstance(params, Mapping) else {}
        if has_id:
            assert message_id is not None  # _valid_id says so; mypy cannot see it
            return ServerRequest(message_id, method, params)
        return Notification(method, params)
    if "error" in value:
        return _error(value.get("error"), message_id if has_id else None)
    if "result" in value and has_id:
        assert message_id is not None
        result = value["result"]
        if isinstance(result, Mapping):
            return Response(message_id, result)
        return ErrorResponse(message_id, INVALID_REQUEST, "the result is not a JSON object")
    return Unreadable("neither a request, a notification nor a response", _sample(str(value)))


def _error(raw: object, message_id: RequestId | None) -> ErrorResponse:
    error = raw if isinstance(raw, Mapping) else {}
    code = error.get("code")
    message = error.get("message")
    return ErrorResponse(
        id=message_id,
        code=code if isinstance(code, int) and not isinstance(code, bool) else INTERNAL_ERROR,
        message=message if isinstance(message, str) else "an error without a message",
        data=error.get("data"),
    )


def _valid_id(value: object) -> bool:
    # JSON-RPC allows null ids; MCP forbids them, and a bool is not a number here.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _sample(text: str) -> str:
    return text[:_SAMPLE]
