"""What an MCP tool is called in seri: ``mcp__<server>__<tool>``, as in Claude Code and Codex.

Providers take function names of ``[A-Za-z0-9_-]`` only, at most 64 characters (OpenAI's
limit, the tightest of those seri talks to), so every other character becomes ``_``. A name
that is still too long, or that two tools would share after that, is cut and given eight hex
digits of a hash of its server and tool, so it is the same on every run and every machine and
never collides. Calls are routed through the table this builds, never by splitting a name
apart, since a server or a tool may itself contain ``__``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

PREFIX = "mcp__"
SEPARATOR = "__"
MAX_NAME_LENGTH = 64
_HASH_DIGITS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
VALID_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@attrs.frozen
class ExposedName:
    """The name the model calls, and the server and tool it stands for."""

    exposed: str
    server: str
    tool: str


def safe_part(text: str) -> str:
    """``text`` with every character a provider would refuse replaced by ``_``."""
    return _UNSAFE.sub("_", text) or "_"


def server_prefix(server: str) -> str:
    """The start every tool name of ``server`` shares (``mcp__git__``): for rules and display."""
    return f"{PREFIX}{safe_part(server)}{SEPARATOR}"


def name_tools(pairs: Iterable[tuple[str, str]]) -> tuple[ExposedName, ...]:
    """An exposed name for each ``(server, tool)``, unique and valid, in the order given."""
    taken: set[str] = set()
    names: list[ExposedName] = []
    for server, tool in pairs:
        plain = server_prefix(server) + safe_part(tool)
        exposed = plain
        if len(plain) > MAX_NAME_LENGTH or plain in taken:
            exposed = _hashed(plain, server, tool, taken)
        taken.add(exposed)
        names.append(ExposedName(exposed=exposed, server=server, tool=tool))
    return tuple(names)


def _hashed(plain: str, server: str, tool: str, taken: set[str]) -> str:
    import hashlib  # only when a name is long or clashes: most sessions never need it

    seed = f"{server}\0{tool}"
    for attempt in range(1000):
        digest = hashlib.sha1(f"{seed}\0{attempt}".encode(), usedforsecurity=False).hexdigest()
        suffix = "_" + digest[:_HASH_DIGITS]
        candidate = plain[: MAX_NAME_LENGTH - len(suffix)] + suffix
        if candidate not in taken:
            return candidate
    raise AssertionError("a thousand hash collisions in a row")  # pragma: no cover
