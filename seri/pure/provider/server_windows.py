"""The context window a server reports about itself, read from its own answers.

Each server says it differently: OpenRouter's ``/models`` entry has ``context_length`` (and
``top_provider.context_length``), vLLM's has ``max_model_len``, llama.cpp's has ``meta.n_ctx``
(its ``/props`` has ``default_generation_settings.n_ctx``), Ollama's ``/api/show`` has the
``num_ctx`` it runs with in ``parameters`` and the model's trained ``<arch>.context_length`` in
``model_info``. These functions take the decoded JSON and return a positive int or ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any


def _positive(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def window_of_entry(entry: Mapping[str, Any]) -> int | None:
    """The window one ``/models`` entry states, whichever server wrote it."""
    meta = _mapping(entry.get("meta"))
    for value in (
        entry.get("context_length"),
        _mapping(entry.get("top_provider")).get("context_length"),
        entry.get("max_model_len"),
        meta.get("n_ctx"),
        meta.get("n_ctx_slot"),
    ):
        found = _positive(value)
        if found is not None:
            return found
    return None


def window_from_listing(listing: object, model: str) -> int | None:
    """The window of ``model`` in a ``GET /models`` answer.

    A local server (llama.cpp, vLLM) serving one model lists it under its file name or alias,
    which need not be what seri was told to ask for: a listing of exactly one model is that one.
    """
    entries = _mapping(listing).get("data")
    if not isinstance(entries, list):
        return None
    models = [entry for entry in entries if isinstance(entry, Mapping)]
    for entry in models:
        if entry.get("id") == model:
            return window_of_entry(entry)
    if len(models) == 1:
        return window_of_entry(models[0])
    return None


def window_from_props(props: object) -> int | None:
    """llama.cpp's ``GET /props``: the per-slot context it was started with."""
    settings = _mapping(_mapping(props).get("default_generation_settings"))
    return _positive(settings.get("n_ctx")) or _positive(_mapping(props).get("n_ctx"))


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def window_from_ollama_show(show: object) -> int | None:
    """Ollama's ``POST /api/show``: ``num_ctx`` if the model sets one, else its trained length."""
    body = _mapping(show)
    parameters = body.get("parameters")
    if isinstance(parameters, str):
        found = _NUM_CTX.search(parameters)
        if found:
            return int(found.group(1))
    for key, value in _mapping(body.get("model_info")).items():
        if str(key).endswith(".context_length"):
            window = _positive(value)
            if window is not None:
                return window
    return None
