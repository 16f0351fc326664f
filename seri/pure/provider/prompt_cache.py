"""Where a request carries prompt-cache breakpoints, and which models need them.

Anthropic models (and Gemini's explicit caching) read from the prompt cache only up to a
block marked ``cache_control: {"type": "ephemeral"}``; OpenRouter passes the marker on. Without
one, every request of a long session is billed at the full input price again. OpenAI, DeepSeek
and the others cache prefixes on their own and are sent no markers.

At most four breakpoints are allowed; seri uses two:

* the frozen system prompt, which never changes within a run;
* the moving end of the conversation (the last user or tool message), so the next call reads
  everything up to it: the provider looks for a cached prefix at the block boundaries before a
  breakpoint, and the previous call's end is two or three messages back.

Only the moving marker changes between calls, and only on the message that carried it: every
other message is encoded to the same bytes every time (the model caller's ``WireCache``), so
everything before the previous call's end is byte for byte what was cached. (A second moving
marker on the previous end would have to be dropped the call after, changing bytes the provider
already cached.)
"""

from __future__ import annotations

from collections.abc import Sequence

from seri.pure.session.records import Message

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # the providers' limit; seri uses two
_MARKABLE = frozenset({"user", "tool"})


def needs_cache_markers(model: str) -> bool:
    """Whether ``model`` (an OpenRouter slug or a bare name) caches only at explicit markers."""
    name = model.lower()
    return (
        name.startswith(("anthropic/", "google/gemini", "gemini-", "claude-")) or "/claude" in name
    )


def breakpoints(model: str, messages: Sequence[Message]) -> frozenset[int]:
    """The indices in ``messages`` (the system message first, if any) to mark."""
    if not needs_cache_markers(model):
        return frozenset()
    marks: set[int] = set()
    if messages and messages[0].role == "system" and messages[0].text:
        marks.add(0)
    end = len(messages) - 1
    if end > 0 and messages[end].role in _MARKABLE and messages[end].text:
        marks.add(end)
    return frozenset(marks)
