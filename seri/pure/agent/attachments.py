"""``@path`` in a message: the file goes along with it, as Claude Code and Codex do it.

A word that starts with ``@`` names a file of the project (``@src/app.py``); the message
is sent as typed, followed by each named file's text in a ``<file path="…">`` block. Only
words that name a readable text file become attachments (``@alice`` stays a word).
"""

from __future__ import annotations

import re

import attrs

# A mention: @ at the start of a word, then a path (trailing punctuation is the sentence's).
_MENTION = re.compile(r"(?<!\S)@([^\s@]+)")
_TRAILING = ".,;:!?)]}'\""
MAX_ATTACHMENT_BYTES = 256 * 1024


@attrs.frozen
class Attachment:
    path: str
    text: str


def mentioned_paths(message: str) -> tuple[str, ...]:
    """The paths the message names with ``@``, in order, each once."""
    seen: list[str] = []
    for match in _MENTION.finditer(message):
        path = match.group(1).rstrip(_TRAILING)
        if path and path not in seen:
            seen.append(path)
    return tuple(seen)


def with_attachments(message: str, attachments: tuple[Attachment, ...]) -> str:
    """The message as typed, then each file's text in its own block."""
    blocks = [
        f'<file path="{a.path}">\n{a.text}{"" if a.text.endswith(chr(10)) else chr(10)}</file>'
        for a in attachments
    ]
    return "\n\n".join((message, *blocks)) if blocks else message
