"""The largest prompt a session takes, and why a larger one is refused before it is stored."""

from __future__ import annotations

import attrs

from seri.pure.compaction.tokens import estimate_tokens
from seri.pure.compaction.window import Window


def prompt_limit_local(window: Window) -> int:
    """The largest prompt a session takes, in local tokens: a third of what a request can hold
    for the history, less one answer (the answer to the prompt before).

    A cut evicts at least ``MIN_EVICTED`` (four) messages, so a history of three messages and
    the new prompt can only be sent whole: even three prompts this size, with an answer between
    them, fit one request, and every later task can compact them away. A larger prompt would be
    stored and then refused by the provider on every ``--continue``.

    The room for the next answer (``answer_tokens``, as large as a configured max_tokens) is
    already out of ``request_room_local``; the answer *in* the history is a typical one
    (``typical_answer_tokens``): taking the configured max_tokens off twice left a 128k window
    with ``max_tokens: 64000`` room for a prompt of one token.
    """
    room = window.request_room_local - window.local(window.typical_answer_tokens)
    return max(1, room // 3)


def oversized_prompt(window: Window, prompt_chars: int, budget_key: str = "max_tokens") -> str:
    """Why a prompt of ``prompt_chars`` characters is refused before it is stored, or "".

    When the prompt would fit beside the default answer room, the configured answer budget is
    what takes the room, and the message says so (naming the sampling key to lower)."""
    size = estimate_tokens(prompt_chars)
    limit = prompt_limit_local(window)
    if size <= limit:
        return ""
    head = (
        f"the prompt is too big for this model's window: {prompt_chars:,} characters, about "
        f"{window.provider(size):,} tokens, and a prompt may take at most about "
        f"{window.provider(limit):,} of the window's {window.tokens:,} tokens"
    )
    default = attrs.evolve(window, answer_tokens=window.typical_answer_tokens)
    if window.answer_tokens > window.typical_answer_tokens and size <= prompt_limit_local(default):
        return (
            f"{head}, because sampling.{budget_key} in config.json keeps "
            f"{window.answer_tokens:,} of them free for the answer; nothing was stored. Lower "
            f"sampling.{budget_key} (or remove it), or use a model with a larger window"
        )
    return (
        f"{head} (a third of what a request holds besides the system prompt, the tools and the "
        "answer); nothing was stored. Save it to a file and ask seri to read that file, or use "
        "a model with a larger window (context_window in config.json)"
    )
