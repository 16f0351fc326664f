"""Images and files in the older release's messages: a line of text in their place.

seri sends no images, so an image part, in user content or inside a tool result, becomes a
placeholder that keeps what can be told about it: its media type and its size. The shapes are
the AI SDK's (``ModelMessage`` user parts ``{"type": "image", "image", "mediaType"}`` and
``{"type": "file", "data", "mediaType"}``; a tool result's ``{"type": "content", "value":
[...]}`` with ``text``, ``media``, ``image-data``, ``file-data``, ``image-url``, ``file-url``,
``image-file-id``, ``file-id`` parts: vercel/ai packages/provider/src/language-model/
v2/ and v4/ ``*-prompt.ts``). Without this, a tool result's image was imported as its JSON,
base64 and all, and sent to the model as text.
"""

from __future__ import annotations

import json
from typing import Any

IMAGE_PLACEHOLDER_END = "was attached here; the older release's images are not imported]"
FILE_PLACEHOLDER_END = "was attached here; the older release's files are not imported]"

_IMAGE_KINDS = frozenset({"image", "image-data", "image-url", "image-file-id"})
_FILE_KINDS = frozenset({"file", "file-data", "media", "file-url", "file-id"})


def media_type(part: dict[str, Any]) -> str:
    media = part.get("mediaType") or part.get("mimeType")
    return media if isinstance(media, str) else ""


def is_image(part: dict[str, Any]) -> bool:
    kind = part.get("type")
    if kind in _IMAGE_KINDS:
        return True
    return kind in _FILE_KINDS and media_type(part).startswith("image/")


def is_file(part: dict[str, Any]) -> bool:
    return part.get("type") in _FILE_KINDS and not is_image(part)


def base64_size(data: object) -> int | None:
    """The bytes that base64 ``data`` (or a ``data:`` URL of it) decodes to; ``None`` for
    anything else (an http URL, a file id, bytes the JSON could not carry)."""
    if not isinstance(data, str):
        return None
    text = data.strip()
    if text.startswith("data:"):
        header, comma, text = text.partition(",")
        if not comma or not header.endswith(";base64"):
            return None
    text = "".join(text.split())
    if not text or len(text) % 4 or not _is_base64(text):
        return None
    return len(text) // 4 * 3 - len(text) + len(text.rstrip("="))


def _is_base64(text: str) -> bool:
    body = text.rstrip("=")
    return len(text) - len(body) <= 2 and all(
        c.isascii() and (c.isalnum() or c in "+/-_") for c in body
    )


def placeholder(part: dict[str, Any]) -> str:
    """``[an image (image/png, 1,234 bytes) was attached here; …]``, or a file's."""
    size = base64_size(part.get("data", part.get("image")))
    details = [media_type(part)] if media_type(part) else []
    if size is not None:
        details.append(f"{size:,} bytes")
    what = "an image" if is_image(part) else "a file"
    if details:
        what += f" ({', '.join(details)})"
    end = IMAGE_PLACEHOLDER_END if is_image(part) else FILE_PLACEHOLDER_END
    return f"[{what} {end}"


def content_output_text(where: str, value: object, warnings: list[str]) -> str:
    """A tool result's ``content`` output as text: its text parts, and a placeholder for each
    image or file part (each placeholder on a line of its own)."""
    if not isinstance(value, list):
        return json.dumps(value, ensure_ascii=False)
    pieces: list[str] = []
    for part in value:
        if not isinstance(part, dict):
            pieces.append(json.dumps(part, ensure_ascii=False))
        elif part.get("type") == "text" and isinstance(part.get("text"), str):
            pieces.append(part["text"])
        elif is_image(part) or is_file(part):
            pieces.append(placeholder(part))
            kind = "an image" if is_image(part) else "a file"
            warnings.append(f"{where}: {kind} in a tool result was replaced by a placeholder")
        else:
            pieces.append(json.dumps(part, ensure_ascii=False))
    return "\n".join(pieces)
