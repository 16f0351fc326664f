"""config.json's ``sampling.stop``: the stop sequences of OpenAI's chat completions API.

The provider ends an answer where one of them would begin (finish_reason "stop"), which is how
a small local model that never ends on its own is made to. OpenAI takes a string or a list of
up to four strings (null: none); a server told anything else answers 400 on the first request,
so seri refuses it when it reads config.json, naming the key and what to write instead.
"""

from __future__ import annotations

from typing import Any

# OpenAI's own limit; llama.cpp and vLLM take more, but a config that works everywhere is the
# one that stays within it.
MOST_STOP_SEQUENCES = 4

_FIX = 'write a string or a list of up to 4 non-empty strings, e.g. "stop": ["\\n\\n"]'


def _string_problem(where: str, item: Any) -> str | None:
    if not isinstance(item, str):
        return f"{where} must be a string, not {item!r}"
    if not item:
        # An empty sequence is found before the first character: every answer would be empty.
        return f"{where} is an empty string, which would end every answer before it starts"
    try:
        item.encode("utf-8")
    except UnicodeEncodeError:
        return f"{where} holds a lone surrogate, which no provider can be sent"
    return None


def stop_problem(value: Any) -> str | None:
    """Why ``value`` cannot be ``sampling.stop`` (one line with the fix), or None if it can."""
    key = "config.json: 'sampling.stop'"
    if value is None:
        return None
    if isinstance(value, str):
        problem = _string_problem(key, value)
    elif isinstance(value, list):
        if not value or len(value) > MOST_STOP_SEQUENCES:
            problem = f"{key} lists {len(value)} stop sequences"
        else:
            found = (_string_problem(f"{key}[{i}]", item) for i, item in enumerate(value))
            problem = next((p for p in found if p), None)
    else:
        problem = f"{key} must be a string or a list of strings, not {value!r}"
    return f"{problem}: {_FIX}" if problem else None
