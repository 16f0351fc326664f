"""Random ids for sessions, runs and subagents.

``uuid.uuid4().hex`` without the ``uuid`` module: importing it loads ``platform`` and costs
~8 ms of every ``seri chat`` start, for sixteen random bytes.
"""

from __future__ import annotations

import os


def random_id() -> str:
    """32 hex digits of a version-4 UUID (RFC 9562 variant bits set), as ``uuid4().hex``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return raw.hex()
