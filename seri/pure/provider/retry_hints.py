"""When and whether a failed request may be asked again, as the answer says: ``Retry-After``
(and ``retry-after-ms``), a rate limit's reset time, a body's retry hints and ``retryable``
flag, and a 429 that is a spent quota (which waiting cannot help). ``retry_plan`` decides
from these."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime

from seri.pure.inputs.lazy_pattern import LazyPattern
from seri.pure.provider.provider_error_body import Evidence, error_object, provider_message
from seri.pure.provider.retry_plan import approximate_duration

# Statuses worth a second attempt (openai-python's list: 408, 409 and 429, and every 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 429})


# --- Retry-After -----------------------------------------------------------------------------


def _lower_keys(headers: Mapping[str, str]) -> dict[str, str]:
    return {key.lower(): value for key, value in headers.items()}


def _seconds(value: str) -> float | None:
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(seconds, 0.0)


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The server's retry hint in seconds: ``retry-after-ms``, else ``Retry-After``.

    ``Retry-After`` may be seconds (a float is tolerated) or an HTTP-date; a date needs ``now``
    (seconds since the epoch) and gives ``None`` without it. A date in the past means 0.
    """
    lowered = _lower_keys(headers)
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        seconds = _seconds(millis)
        if seconds is not None:
            return seconds / 1000.0
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    if now is None:
        return None
    # email.utils loads most of the email package (~8 ms): only an HTTP date needs it.
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(when.timestamp() - now, 0.0)


def body_retry_after(body: object, now: float | None = None) -> float | None:
    availability = error_object(body).get("availability")
    if isinstance(availability, Mapping):
        hint = availability.get("retry_after")
        if isinstance(hint, int | float) and not isinstance(hint, bool) and hint >= 0:
            return float(hint)
    reset = rate_limit_reset(body)
    if reset is not None and now is not None:
        return max(reset - now, 0.0)
    return None


def rate_limit_reset(body: object, headers: Mapping[str, str] | None = None) -> float | None:
    """When a rate limit or quota resets, in seconds since the epoch, if the answer says so.

    OpenRouter puts ``X-RateLimit-Reset`` (milliseconds since the epoch) inside the error's
    ``metadata.headers``; other servers send it as a response header, in seconds.
    """
    candidates: list[object] = []
    metadata = error_object(body).get("metadata")
    inner = metadata.get("headers") if isinstance(metadata, Mapping) else None
    if isinstance(inner, Mapping):
        candidates.extend(v for k, v in inner.items() if str(k).lower() == "x-ratelimit-reset")
    if headers:
        candidates.append(_lower_keys(headers).get("x-ratelimit-reset"))
    for value in candidates:
        try:
            stamp = float(str(value).strip())
        except ValueError:
            continue
        if math.isfinite(stamp) and stamp > 0:
            # Milliseconds and seconds since the epoch differ by three orders of magnitude.
            seconds = stamp / 1000.0 if stamp > 1e11 else stamp
            if seconds < _LAST_STAMP:
                return seconds
    return None


# 9999-12-31 00:00 UTC: a reset past any calendar date is not believed (and cannot be shown).
_LAST_STAMP = 253_402_214_400.0


def _utc(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


# A 429 that is a spent quota: waiting a few seconds cannot help, so it is not retried.
_QUOTA_MARKERS = frozenset({"insufficient_quota", "openrouter_free_tier_daily"})
_QUOTA_TEXTS = LazyPattern(
    r"free-models-per-day|exceeded your current quota|per-day|daily (?:limit|quota)",
    re.IGNORECASE,
)


def quota_message(
    evidence: Evidence, body: object, headers: Mapping[str, str], now: float | None
) -> str | None:
    """What ran out and when it comes back, for a 429 that is a quota; None for a rate."""
    if not (
        evidence.markers & _QUOTA_MARKERS or any(_QUOTA_TEXTS.search(t) for t in evidence.texts)
    ):
        return None
    said = provider_message(body)
    what = (
        "the account's quota is used up"
        if "insufficient_quota" in evidence.markers
        else ("a daily request quota is used up")
    )
    reset = rate_limit_reset(body, headers)
    when = ""
    if reset is not None:
        when = f"; it resets at {_utc(reset)}"
        if now is not None and reset > now:
            when += f" (in {approximate_duration(reset - now)})"
    return f"{what}{when}; not retried: {said}" if said else f"{what}{when}; not retried"


def _body_retryable(body: object) -> bool | None:
    # "Always switch on availability.retryable" (OpenRouter's model-availability errors).
    availability = error_object(body).get("availability")
    if isinstance(availability, Mapping):
        flag = availability.get("retryable")
        if isinstance(flag, bool):
            return flag
    return None


def should_retry(status: int, headers: Mapping[str, str], body: object) -> bool:
    verdict = _lower_keys(headers).get("x-should-retry", "").strip().lower()
    if verdict in ("true", "false"):
        return verdict == "true"
    flag = _body_retryable(body)
    if flag is not None:
        return flag
    return status in RETRYABLE_STATUSES or status >= 500
