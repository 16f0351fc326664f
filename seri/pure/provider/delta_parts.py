"""Reading the parts of one chat-completions delta, whatever a backend calls them: text and
thinking parts, plain reasoning, reasoning details, and surrogate pairs joined into the
character they encode. Loose by design: a field of the wrong type reads as empty."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seri.pure.inputs.lazy_pattern import LazyPattern

HIGH_SURROGATE = LazyPattern("[\ud800-\udbff]")
_SURROGATE = LazyPattern("[\ud800-\udfff]")


def whole_characters(text: str) -> str:
    """Surrogate pairs (``\\ud83d`` + ``\\ude00``, as JSON escapes deliver a character
    outside the BMP, perhaps in two chunks) joined into the one character they encode; a
    lone half stays as it is, for the writers that escape or replace it."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")


def text_or_empty(value: object) -> str:
    return value if isinstance(value, str) else ""


def mapping_or_empty(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def reasoning_text(delta: Mapping[str, Any]) -> str:
    """The plain reasoning of one delta, whatever the backend calls it.

    OpenRouter and new vLLM say ``reasoning``, llama.cpp and DeepSeek ``reasoning_content``;
    some send both with the same text, so the first one present wins. Codex's tests even see
    ``reasoning`` as an object with ``text`` or ``content``.
    """
    for key in ("reasoning", "reasoning_content"):
        value = delta.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, Mapping):
            inner = value.get("text") or value.get("content")
            if isinstance(inner, str) and inner:
                return inner
    return ""


def details_text(details: list[Any]) -> str:
    parts: list[str] = []
    for item in details:
        entry = mapping_or_empty(item)
        piece = entry.get("text") if entry.get("type") == "reasoning.text" else None
        if entry.get("type") == "reasoning.summary":
            piece = entry.get("summary")
        if isinstance(piece, str):
            parts.append(piece)
    return "".join(parts)


def content_parts(content: object) -> tuple[str, str]:
    """Text and thinking of a ``content`` that is a string or a list of typed parts.

    Mistral's magistral models stream ``[{"type": "thinking", "thinking": [{"type": "text",
    "text": ...}]}]`` before ``[{"type": "text", "text": ...}]``.
    """
    if isinstance(content, str):
        return content, ""
    if not isinstance(content, list):
        return "", ""
    text: list[str] = []
    thinking: list[str] = []
    for part in content:
        entry = mapping_or_empty(part)
        kind = entry.get("type")
        if kind == "text" and isinstance(entry.get("text"), str):
            text.append(entry["text"])
        elif kind == "thinking":
            inner = entry.get("thinking")
            if isinstance(inner, str):
                thinking.append(inner)
            elif isinstance(inner, list):
                thinking.extend(
                    piece["text"]
                    for piece in map(mapping_or_empty, inner)
                    if isinstance(piece.get("text"), str)
                )
    return "".join(text), "".join(thinking)
