"""What an MCP tool call comes to, as text the model reads, whether it worked or not.

A ``CallToolResult`` holds content blocks: text, images, audio, links to resources and
embedded resources, and perhaps ``structuredContent``. The model gets the text as is; an image
or audio clip becomes a one-line placeholder saying what it was (its base64 never enters the
window); a resource link is named with its URI; an embedded text resource is shown with its
URI as a heading and a binary one as a placeholder; structured content is added as compact
JSON unless a text block already says the same (most servers send both).

Every way a call can fail is an outcome too, never an exception: the server said the tool
failed (``isError``), refused the request (a JSON-RPC error), asked for input seri cannot give,
did not answer in time, or stopped. Each comes with words the model can act on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.compaction.result_cap import cap_result
from seri.pure.inputs import json_text
from seri.pure.inputs.json_text import dump_json
from seri.pure.mcp.mcp_protocol import result_type

OK = "ok"
TOOL_ERROR = "tool_error"
RPC_ERROR = "rpc_error"
INPUT_REQUIRED = "input_required"
TIMEOUT = "timeout"
CANCELLED = "cancelled"
SERVER_EXITED = "server_exited"
UNAVAILABLE = "unavailable"
PROTOCOL = "protocol"


@attrs.frozen
class McpCallOutcome:
    """One call's result: ``text`` for the model, ``is_error`` for the tool message, ``kind``
    for the record; the counts say what the placeholders stand for."""

    text: str
    is_error: bool
    kind: str
    images: int = 0
    audio: int = 0
    resources: int = 0
    structured: bool = False


def render_result(
    result: Mapping[str, Any], cap_chars: int | None = None, full_text_at: str = ""
) -> McpCallOutcome:
    """The text of a ``CallToolResult`` (or a modern ``input_required`` result).

    With ``cap_chars`` the text is cut like any other tool result (head and tail kept, a
    marker between; ``full_text_at`` names the file that holds all of it, if one was written).
    """
    if result_type(result) == "input_required":
        return McpCallOutcome(
            text=(
                "the MCP server asked for more input before it would finish (elicitation, "
                "sampling or roots), which seri does not provide; try the call with "
                "different arguments, or do the task another way"
            ),
            is_error=True,
            kind=INPUT_REQUIRED,
        )
    counts = _Counts()
    parts = [_block_text(block, counts) for block in _blocks(result)]
    structured = result.get("structuredContent")
    shown_structured = structured is not None and not _said_in_text(structured, result)
    if shown_structured:
        parts.append(dump_json(structured))
    is_error = result.get("isError") is True
    text = "\n".join(part for part in parts if part)
    if not text:
        text = "the tool reported an error and gave no message" if is_error else "(no output)"
    if cap_chars is not None:
        text = cap_result(text, cap_chars, full_text_at)
    return McpCallOutcome(
        text=text,
        is_error=is_error,
        kind=TOOL_ERROR if is_error else OK,
        images=counts.images,
        audio=counts.audio,
        resources=counts.resources,
        structured=shown_structured,
    )


def failed(kind: str, text: str) -> McpCallOutcome:
    """A call that produced no result: the words say what happened and what to do."""
    return McpCallOutcome(text=text, is_error=True, kind=kind)


def rpc_error_text(server: str, tool: str, code: int, message: str) -> str:
    return (
        f"MCP server {server!r} refused the call to {tool!r}: {message or 'no message'} "
        f"(JSON-RPC error {code})"
    )


def timeout_text(server: str, tool: str, seconds: float) -> str:
    return (
        f"{tool!r} on MCP server {server!r} gave no result within {seconds:g} s, so seri "
        "cancelled the call; the server may still have done part of the work"
    )


@attrs.define
class _Counts:
    images: int = 0
    audio: int = 0
    resources: int = 0


def _blocks(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    content = result.get("content")
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, Mapping)]


def _block_text(block: Mapping[str, Any], counts: _Counts) -> str:
    kind = block.get("type")
    if kind == "text":
        return _text(block.get("text"))
    if kind in ("image", "audio"):
        if kind == "image":
            counts.images += 1
        else:
            counts.audio += 1
        return _media_placeholder(str(kind), block)
    if kind == "resource_link":
        counts.resources += 1
        return _link_line(block)
    if kind == "resource":
        counts.resources += 1
        resource = block.get("resource")
        return _embedded(resource if isinstance(resource, Mapping) else {})
    return f"[content of type {str(kind)[:40]!r}, which seri cannot show]"


def _media_placeholder(kind: str, block: Mapping[str, Any]) -> str:
    mime = _text(block.get("mimeType")) or f"{kind}/unknown"
    size = _base64_size(block.get("data"))
    return f"[{kind} ({mime}, {size:,} bytes) returned by the tool: not shown to the model]"


def _link_line(block: Mapping[str, Any]) -> str:
    name = _text(block.get("title")) or _text(block.get("name"))
    uri = _text(block.get("uri"))
    extras = [
        text for text in (_text(block.get("mimeType")), _text(block.get("description"))) if text
    ]
    detail = f" ({'; '.join(extras)})" if extras else ""
    return f"[resource link: {name or uri} <{uri}>{detail}]"


def _embedded(resource: Mapping[str, Any]) -> str:
    uri = _text(resource.get("uri"))
    text = resource.get("text")
    if isinstance(text, str):
        return f"[resource {uri}]\n{text}"
    mime = _text(resource.get("mimeType")) or "application/octet-stream"
    size = _base64_size(resource.get("blob"))
    return f"[resource {uri} ({mime}, {size:,} bytes of binary data): not shown to the model]"


def _said_in_text(structured: object, result: Mapping[str, Any]) -> bool:
    """Whether a text block already holds the structured content: as JSON, or the one value
    it wraps (the Python SDK sends ``{"result": value}``, server-filesystem ``{"content": text}``
    beside the same text)."""
    candidates = [structured]
    if isinstance(structured, Mapping) and len(structured) == 1:
        candidates.append(next(iter(structured.values())))
    for block in _blocks(result):
        if block.get("type") != "text":
            continue
        text = _text(block.get("text"))
        if text in candidates:
            return True
        try:
            if json_text.loads(text) in candidates:
                return True
        except ValueError:
            continue
    return False


def _base64_size(data: object) -> int:
    if not isinstance(data, str):
        return 0
    stripped = data.rstrip("=")
    return len(stripped) * 3 // 4


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
