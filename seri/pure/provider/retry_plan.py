"""Whether to try a failed model call again, and after how long: a pure decision.

The HTTP client owns the loop, the sleeping and the random jitter; this module only says
"retry after d seconds" or "stop, and here is why".
"""

from __future__ import annotations

import attrs

from seri.pure.provider.provider_failure import ProviderFailure

# Backoff without a server hint: 0.5 s doubling up to 8 s (openai-python's constants).
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0


@attrs.frozen
class RetryPlan:
    """The retry loop's next step: sleep ``delay`` s and try again, or stop with ``failure``."""

    retry: bool
    delay: float
    failure: ProviderFailure


def backoff_delay(retry: int, jitter: float) -> float:
    """Seconds to wait before retry number ``retry`` (1 for the first) with no server hint.

    The nominal delay ``d`` is 0.5 s doubling each retry, capped at 8 s. ``jitter`` is a random
    fraction in [0, 1) drawn by the caller; the result lies in [0.75·d, d], so retries from many
    clients spread out instead of arriving together.
    """
    if retry < 1:
        raise ValueError(f"retries count from 1, got {retry}")
    fraction = min(max(jitter, 0.0), 1.0)
    nominal = min(INITIAL_RETRY_DELAY * 2.0 ** min(retry - 1, 32), MAX_RETRY_DELAY)
    return nominal * (1.0 - 0.25 * fraction)


def approximate_duration(seconds: float) -> str:
    """A wait as a person would say it: "~45 s", "~5 min", "~1 h"."""
    if seconds < 90:
        return f"~{max(round(seconds), 1)} s"
    if seconds < 3600:
        return f"~{round(seconds / 60)} min"
    return f"~{round(seconds / 3600)} h"


def repeated_internal_error(failure: ProviderFailure, previous: ProviderFailure | None) -> bool:
    """Whether ``failure`` is the same 500 answer, body and all, as the attempt before.

    A server that answers the very same request with the very same internal error twice in a
    row is refusing the request itself (llama.cpp answers 500 to a request it cannot parse or
    template), not failing for a moment: three more attempts would only wait for nothing.
    """
    return (
        previous is not None
        and failure.status == 500
        and previous.status == 500
        and bool(failure.detail)
        and failure.detail == previous.detail
        and failure.message == previous.message
    )


def plan_retry(
    failure: ProviderFailure,
    attempt: int,
    *,
    max_attempts: int,
    cap_seconds: float,
    jitter: float,
    previous: ProviderFailure | None = None,
) -> RetryPlan:
    """Whether to retry after attempt number ``attempt`` (from 1) failed with ``failure``
    (``previous``: how the attempt before it failed, if it did).

    A server hint is obeyed when it is within ``cap_seconds``; beyond it, waiting inside one
    command is pointless, so the call fails at once saying roughly when to come back. Without a
    hint the delay is ``backoff_delay``. The same internal error twice in a row is not retried
    again (``repeated_internal_error``).
    """
    if not failure.retryable:
        return RetryPlan(retry=False, delay=0.0, failure=failure)
    if repeated_internal_error(failure, previous):
        told = attrs.evolve(
            failure,
            message=(
                f"{failure.message} (the same answer to {attempt} attempts in a row: the "
                "server refuses this request itself, so it is not retried again)"
            ),
        )
        return RetryPlan(retry=False, delay=0.0, failure=told)
    hint = failure.retry_after
    if hint is not None and hint > cap_seconds:
        what = "rate limited" if failure.kind == "rate_limited" else "provider unavailable"
        told = attrs.evolve(
            failure,
            message=f"{what}, retry after {approximate_duration(hint)} ({failure.message})",
            retryable=False,
        )
        return RetryPlan(retry=False, delay=0.0, failure=told)
    if attempt >= max_attempts:
        plural = "attempt" if attempt == 1 else "attempts"
        gave_up = attrs.evolve(
            failure, message=f"{failure.message} (gave up after {attempt} {plural})"
        )
        return RetryPlan(retry=False, delay=0.0, failure=gave_up)
    delay = hint if hint is not None and hint > 0 else backoff_delay(attempt, jitter)
    return RetryPlan(retry=True, delay=delay, failure=failure)
