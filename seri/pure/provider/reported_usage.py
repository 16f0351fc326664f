"""A ``Usage`` record from a provider's ``usage`` object, believing only sane numbers: a count
or cost that is no number, negative or larger than any call could be counts as not reported."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seri.pure.provider.delta_parts import mapping_or_empty
from seri.pure.session.records import Usage

# More tokens than any model has read or written in one call, and more than any call has
# cost: a usage number past these (or below zero, NaN, infinite) is not believed and counts
# as not reported. Both sit well inside what SQLite's 64-bit integers and JSON's exact
# integers (2**53) hold, so a believed number can always be stored.
MAX_TOKENS = 10**10
MAX_COST = 10**6


def _count(value: object) -> int:
    """A usage count as reported, or 0 (not reported) when it is not a sane count: not a
    whole number, negative, or more than any request could hold."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_TOKENS:
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_TOKENS:
        return value
    return 0


def _money(value: object) -> float | None:
    """A reported cost, or None when it is no price: not a number, negative, NaN, infinite
    or more than any call has cost."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= MAX_COST else None  # NaN compares false: None


def usage_from(raw: Mapping[str, Any], provider: str = "") -> Usage:
    """A ``Usage`` record from an OpenAI/OpenRouter ``usage`` object.

    Cache reads are ``prompt_tokens_details.cached_tokens`` (OpenAI, OpenRouter); Moonshot puts
    ``cached_tokens`` at the top level. Cache writes are OpenRouter's
    ``prompt_tokens_details.cache_write_tokens``.
    """
    details = mapping_or_empty(raw.get("prompt_tokens_details"))
    return Usage(
        input_tokens=_count(raw.get("prompt_tokens")),
        output_tokens=_count(raw.get("completion_tokens")),
        reasoning_tokens=_count(
            mapping_or_empty(raw.get("completion_tokens_details")).get("reasoning_tokens")
        ),
        cached_tokens=_count(details.get("cached_tokens")) or _count(raw.get("cached_tokens")),
        cost=_money(raw.get("cost")),
        provider=provider,
        cache_write_tokens=_count(details.get("cache_write_tokens")),
        # Only with the user's own key is the upstream cost on top of `cost`; otherwise it is a
        # breakdown of the same charge and adding it would count it twice.
        upstream_cost=(
            _money(mapping_or_empty(raw.get("cost_details")).get("upstream_inference_cost"))
            if raw.get("is_byok") is True
            else None
        ),
    )
