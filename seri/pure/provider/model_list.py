"""The models a server says it has (``GET /models``), and what to make of a name typed at
``/model``: one of them, or a typo with its closest matches."""

from __future__ import annotations

import difflib
from typing import Any

import attrs


def listed_model_ids(listing: Any) -> tuple[str, ...] | None:
    """The ids of an OpenAI-style listing (``{"data": [{"id": …}, …]}``), sorted; None when
    the answer is no listing at all (a server that does not list its models)."""
    if not isinstance(listing, dict) or not isinstance(listing.get("data"), list):
        return None
    ids = {entry.get("id") for entry in listing["data"] if isinstance(entry, dict)}
    return tuple(sorted(i for i in ids if isinstance(i, str) and i))


@attrs.frozen
class ModelCheck:
    known: bool
    closest: tuple[str, ...] = ()


def check_model(name: str, listed: tuple[str, ...] | None) -> ModelCheck:
    """Whether ``name`` is a model the server lists (any name, when it lists none)."""
    if not listed or name in listed:
        return ModelCheck(True)
    lowered = {model.lower(): model for model in listed}
    if name.lower() in lowered:
        return ModelCheck(False, (lowered[name.lower()],))
    close = difflib.get_close_matches(name, listed, n=3, cutoff=0.6)
    return ModelCheck(False, tuple(close))
