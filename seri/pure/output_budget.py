"""When the provider says only the output budget is too big, how far to lower it.

Two answers ask for a smaller ``max_tokens`` rather than a shorter conversation: an overflow
whose numbers show the input alone fits the window (``A + B > C`` with ``A < C``, or
``(N of text input, M in the output)``), and OpenRouter's 402 "can only afford N tokens".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seri.pure.provider_failure import ProviderFailure

# Slack under the window for the provider's own counting, and the smallest budget worth a try.
OUTPUT_MARGIN = 64
MIN_OUTPUT_TOKENS = 256
_KEYS = ("max_tokens", "max_completion_tokens")


def lowered_output_budget(
    failure: ProviderFailure, sampling: Mapping[str, Any]
) -> tuple[str, int, str] | None:
    """``(key, new budget, why)`` or None when lowering the budget would not help.

    The key is the one config.json set, else ``max_tokens``. None when the new budget would
    be below ``MIN_OUTPUT_TOKENS`` or not below the budget already set (a second lowering to
    the same value would only repeat the refusal).
    """
    key = next((k for k in _KEYS if k in sampling), "max_tokens")
    current = sampling.get(key)
    room: int | None = None
    why = ""
    numbers = failure.overflow
    if (
        failure.kind == "context_overflow"
        and numbers is not None
        and numbers.input_fits()
        and numbers.limit is not None
        and numbers.input_tokens is not None
    ):
        room = numbers.limit - numbers.input_tokens - OUTPUT_MARGIN
        why = "so that the answer fits the window"
    elif failure.kind == "credits" and failure.affordable_tokens is not None:
        room = failure.affordable_tokens - OUTPUT_MARGIN
        why = "to what the credit left can pay for"
    if room is None or room < MIN_OUTPUT_TOKENS:
        return None
    if isinstance(current, int) and not isinstance(current, bool) and room >= current:
        return None
    return key, room, why
