"""How a session is named in listings: its first prompt, shortened."""

from __future__ import annotations

TITLE_WIDTH = 60


def title_from_prompt(text: str, width: int = TITLE_WIDTH) -> str:
    """The first prompt on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    return flat[: width - 1].rstrip() + "…"
