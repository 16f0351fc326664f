"""JSON-RPC 2.0 as the Agent Client Protocol frames it: one JSON object a line.

``parse_line`` turns a line from the client into a value (a request, a notification, a
response to one of seri's own requests, or why it is not a message); ``result``, ``error``,
``request`` and ``notification`` build the lines seri writes. Nothing here reads or writes:
the stdio loop (``seri.runtime.acp.acp_connection``) does.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import ACP_STDIO, line_too_long

# JSON-RPC 2.0's codes are MCP's too (seri.pure.mcp.jsonrpc); ACP adds one for a session that
# needs a key first.
from seri.pure.mcp.jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
)

AUTH_REQUIRED = -32000
# A request that cannot be served as things stand (a session leased elsewhere, unknown id).
REFUSED = -32002

Id = int | str


class AcpError(Exception):
    """A request seri answers with a JSON-RPC error: its code and one line saying why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@attrs.frozen
class ClientMessage:
    """A request (``id`` set) or a notification (``id`` None) from the client."""

    method: str
    params: dict[str, Any]
    id: Id | None = None


@attrs.frozen
class Reply:
    """The client's answer to a request seri sent: its result, or its error's message."""

    id: Id
    result: dict[str, Any] | None
    error: str = ""


@attrs.frozen
class Malformed:
    """A line that is no message: answered with ``code`` (and the id, when one was read)."""

    code: int
    message: str
    id: Id | None = None


Incoming = ClientMessage | Reply | Malformed


def parse_line(line: str) -> Incoming:
    """What the client's ``line`` is, never an exception."""
    try:
        body = json_text.loads_bounded(line, ACP_STDIO)
    except ValueError as e:
        return Malformed(PARSE_ERROR, f"not JSON: {e}")
    if not isinstance(body, dict):
        return Malformed(INVALID_REQUEST, "a message is a JSON object")
    raw_id = body.get("id")
    id_ = raw_id if _is_id(raw_id) else None
    if body.get("jsonrpc") != "2.0":
        return Malformed(INVALID_REQUEST, 'a message has "jsonrpc": "2.0"', id_)
    if "id" in body and raw_id is not None and id_ is None:
        return Malformed(INVALID_REQUEST, "an id is a string or an integer")
    method = body.get("method")
    if method is None:
        return _reply(body, id_)
    if not isinstance(method, str) or not method:
        return Malformed(INVALID_REQUEST, "a method is a non-empty string", id_)
    params = body.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return Malformed(INVALID_PARAMS, f"{method}: params is a JSON object", id_)
    return ClientMessage(method, params, id_)


def overlong_line() -> Malformed:
    """In place of a line longer than ``ACP_STDIO`` allows (its id was never read): the
    line is dropped, and the client is told why."""
    return Malformed(PARSE_ERROR, f"dropped: {line_too_long(ACP_STDIO)}")


def _is_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reply(body: dict[str, Any], id_: Id | None) -> Incoming:
    if id_ is None:
        return Malformed(INVALID_REQUEST, "a message without a method answers a request by id")
    error = body.get("error")
    if error is not None:
        message = error.get("message") if isinstance(error, dict) else None
        return Reply(id_, None, str(message or error))
    result = body.get("result")
    return Reply(id_, result if isinstance(result, dict) else {})


def _line(body: dict[str, Any]) -> str:
    # ensure_ascii: a lone surrogate from a model or a file cannot break the client's decoder.
    return json.dumps(body, ensure_ascii=True, separators=(",", ":"))


def result(id_: Id, value: dict[str, Any] | None) -> str:
    return _line({"jsonrpc": "2.0", "id": id_, "result": value})


def error(id_: Id | None, code: int, message: str, data: object = None) -> str:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return _line({"jsonrpc": "2.0", "id": id_, "error": body})


def request(id_: Id, method: str, params: dict[str, Any]) -> str:
    return _line({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})


def notification(method: str, params: dict[str, Any]) -> str:
    return _line({"jsonrpc": "2.0", "method": method, "params": params})


def client_file_system(capabilities: object) -> tuple[bool, bool]:
    """Whether the client's ``clientCapabilities`` offer reading, and writing, text files
    (``fs/read_text_file``, ``fs/write_text_file``): only a capability set to true."""
    fs = capabilities.get("fs") if isinstance(capabilities, dict) else None
    if not isinstance(fs, dict):
        return False, False
    return fs.get("readTextFile") is True, fs.get("writeTextFile") is True
