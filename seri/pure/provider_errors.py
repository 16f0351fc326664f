"""What a provider's error answer means: a ``ProviderFailure`` a person can act on.

Everything here is pure: the HTTP client hands in a status, the body text and the headers (and,
for an HTTP-date ``Retry-After``, the current time), and gets back a ``ProviderFailure`` value
(``provider_failure``). Whether the wording is a context overflow is the overflow table's
(``overflow_table``) to say; whether and when to try again is ``retry_plan``'s.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime

import attrs

from seri.pure import json_text
from seri.pure.lazy_pattern import LazyPattern
from seri.pure.overflow_table import overflow_numbers, overflow_numbers_in_fields, says_overflow
from seri.pure.provider_failure import FailureKind, OverflowNumbers, ProviderFailure
from seri.pure.retry_plan import approximate_duration

# Statuses worth a second attempt (openai-python's list: 408, 409 and 429, and every 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 429})

# How much of a provider's message a person is shown, and how much of the body is kept.
_MESSAGE_LIMIT = 300
_DETAIL_LIMIT = 2000


# --- secrets ---------------------------------------------------------------------------------

# Anything shaped like a bearer token or an ``sk-`` key, whoever's it is: a provider that echoes
# "Incorrect API key provided: sk-..." must not get the key into a terminal or a transcript.
_KEYLIKE = LazyPattern(r"\bsk-[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+[A-Za-z0-9_\-.~+/=]{6,}")


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every given secret, and anything key-shaped, replaced by ``[redacted]``."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


# --- reading error bodies --------------------------------------------------------------------


def _parse_json(text: str) -> object:
    try:
        return json_text.loads(text)
    except ValueError:
        return None


@attrs.frozen
class _Evidence:
    """Every string of an error body, and the machine-readable codes, gathered recursively."""

    texts: tuple[str, ...]
    markers: frozenset[str]


def _gather(value: object, texts: list[str], markers: set[str], depth: int = 0) -> None:
    # metadata.raw is often the upstream body as a JSON string, sometimes nested twice.
    if depth > 6:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in ("code", "type", "error_type", "limit_source") and isinstance(
                item, str | int
            ):
                markers.add(str(item).lower())
            if key == "excluded_by" and isinstance(item, list):
                markers.update(f"excluded_by:{x}" for x in item if isinstance(x, str))
            if key == "constraint" and isinstance(item, Mapping):
                field = item.get("field")
                if isinstance(field, str):
                    markers.add(f"excluded_by:{field}")
            _gather(item, texts, markers, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _gather(item, texts, markers, depth + 1)
    elif isinstance(value, str):
        texts.append(value)
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            parsed = _parse_json(stripped)
            if parsed is not None:
                _gather(parsed, texts, markers, depth + 1)


def _evidence(body: object) -> _Evidence:
    texts: list[str] = []
    markers: set[str] = set()
    if isinstance(body, str):
        parsed = _parse_json(body)
        if parsed is None:
            texts.append(body)
        else:
            _gather(parsed, texts, markers)
    else:
        _gather(body, texts, markers)
    return _Evidence(tuple(texts), frozenset(markers))


# --- context overflow ------------------------------------------------------------------------


def _is_overflow(evidence: _Evidence, status: int | None) -> bool:
    return says_overflow(evidence.texts, evidence.markers, status)


def is_context_overflow(status: int | None, body: str) -> bool:
    """Whether an error body (JSON or plain text) says the request is too long for the model."""
    if status in (401, 402, 403, 429):
        return False
    return _is_overflow(_evidence(body), status)


def _overflow_numbers_of(evidence: _Evidence, body: object = None) -> OverflowNumbers:
    for text in evidence.texts:
        numbers = overflow_numbers(text)
        if numbers != OverflowNumbers():
            return numbers
    return overflow_numbers_in_fields(_error_object(body))


# --- the provider's own words ----------------------------------------------------------------


def _shorten(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _error_object(body: object) -> Mapping[str, object]:
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
        return body
    return {}


def _raw_message(raw: object) -> str:
    """The upstream message inside ``metadata.raw``, which may be JSON text or an object."""
    if isinstance(raw, str):
        parsed = _parse_json(raw)
        if parsed is None:
            return raw
        raw = parsed
    error = _error_object(raw)
    message = error.get("message")
    return message if isinstance(message, str) else ""


def provider_message(body: object) -> str:
    """What the provider said, from an error body or error object (``""`` if it said nothing)."""
    if isinstance(body, str):
        parsed = _parse_json(body)
        if parsed is None:
            return _shorten(body)
        body = parsed
    error = _error_object(body)
    message = error.get("message")
    said = message if isinstance(message, str) else ""
    metadata = error.get("metadata")
    if isinstance(metadata, Mapping):
        upstream = _raw_message(metadata.get("raw"))
        name = metadata.get("provider_name")
        if upstream and upstream not in said:
            who = f"{name}: " if isinstance(name, str) and name else ""
            said = f"{said} ({who}{upstream})" if said else f"{who}{upstream}"
        reasons = metadata.get("reasons")
        if isinstance(reasons, list) and reasons:
            said = f"{said} (reasons: {', '.join(str(r) for r in reasons)})"
    return _shorten(said)


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


def _body_retry_after(body: object, now: float | None = None) -> float | None:
    availability = _error_object(body).get("availability")
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
    metadata = _error_object(body).get("metadata")
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
_AFFORDABLE = LazyPattern(r"can only afford (\d+)", re.IGNORECASE)


def _quota_message(
    evidence: _Evidence, body: object, headers: Mapping[str, str], now: float | None
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
    availability = _error_object(body).get("availability")
    if isinstance(availability, Mapping):
        flag = availability.get("retryable")
        if isinstance(flag, bool):
            return flag
    return None


# --- classification --------------------------------------------------------------------------


def _status_label(status: int, body: object) -> tuple[FailureKind, str]:
    if status == 400:
        return "bad_request", "the provider rejected the request as invalid"
    if status == 401:
        return "auth", "invalid API key: the provider did not accept the credentials"
    if status == 402:
        return "credits", "insufficient credits on the provider account or key"
    if status == 403:
        metadata = _error_object(body).get("metadata")
        if isinstance(metadata, Mapping) and ("reasons" in metadata or "flagged_input" in metadata):
            return "forbidden", "blocked by moderation"
        return "forbidden", "forbidden: blocked by moderation, a guardrail or permissions"
    if status == 404:
        return "not_found", "model not found, or no provider matches the routing settings"
    if status in (408, 504, 524):
        return "timeout", "the provider timed out"
    if status == 413:
        return "bad_request", "the request is too large for the provider"
    if status == 429:
        return "rate_limited", "rate limited by the provider"
    if status == 502:
        return "server", "the model is down or sent an invalid response"
    if status == 503:
        return "server", "no provider available right now (overloaded or routing too strict)"
    if status == 529:
        return "server", "the provider is overloaded"
    if status >= 500:
        return "server", "the provider had an internal error"
    return "bad_request", "the provider refused the request"


def _should_retry(status: int, headers: Mapping[str, str], body: object) -> bool:
    verdict = _lower_keys(headers).get("x-should-retry", "").strip().lower()
    if verdict in ("true", "false"):
        return verdict == "true"
    flag = _body_retryable(body)
    if flag is not None:
        return flag
    return status in RETRYABLE_STATUSES or status >= 500


def classify_http_error(
    status: int,
    body: str,
    headers: Mapping[str, str] | None = None,
    *,
    now: float | None = None,
    secrets: tuple[str, ...] = (),
    where: str = "",
) -> ProviderFailure:
    """Classify a non-200 answer. ``secrets`` (the API key) are scrubbed from every text kept.

    ``where`` names how it arrived in messages (default ``HTTP <status>``): the same body can
    come as the first event of a 200 stream, or as a 200 JSON body.
    """
    headers = headers or {}
    where = where or f"HTTP {status}"
    body = redact(body, secrets)
    parsed = _parse_json(body)
    structured: object = parsed if parsed is not None else body
    said = provider_message(structured)
    detail = body[:_DETAIL_LIMIT]
    bodiless = not body.strip()
    evidence = _evidence(structured)
    if status not in (401, 402, 403, 429) and _is_overflow(evidence, status):
        message = "the conversation is too long for the model's context window"
        return ProviderFailure(
            kind="context_overflow",
            message=f"{message} ({where}): {said}" if said else f"{message} ({where})",
            status=status,
            retryable=False,
            detail=detail,
            overflow=_overflow_numbers_of(evidence, structured),
            bodiless=bodiless,
        )
    if status == 429:
        quota = _quota_message(evidence, structured, headers, now)
        if quota is not None:
            return ProviderFailure(
                kind="quota", message=f"{quota} ({where})", status=status, detail=detail
            )
    kind, label = _status_label(status, structured)
    hint = parse_retry_after(headers, now)
    if hint is None:
        hint = _body_retry_after(structured, now)
    affordable = None
    if status == 402:
        found = next((m for t in evidence.texts if (m := _AFFORDABLE.search(t))), None)
        affordable = int(found.group(1)) if found else None
    return ProviderFailure(
        kind=kind,
        message=f"{label} ({where}): {said}" if said else f"{label} ({where})",
        status=status,
        retryable=_should_retry(status, headers, structured),
        retry_after=hint,
        detail=detail,
        affordable_tokens=affordable,
        bodiless=bodiless,
    )


_RETRYABLE_STREAM_CODES = frozenset(
    {"408", "429", "500", "502", "503", "504", "529", "server_error", "timeout"}
)
_RETRYABLE_ERROR_TYPES = frozenset(
    {"rate_limit_exceeded", "provider_overloaded", "provider_unavailable", "server", "timeout"}
)


def classify_stream_error(
    error: object, provider: str = "", secrets: tuple[str, ...] = ()
) -> ProviderFailure:
    """Classify an error event that arrived inside a 200 stream.

    ``error`` is the chunk's ``error`` object (OpenRouter, vLLM's wrapped form), the whole chunk
    (vLLM's ``{"object": "error", "message": ...}``), or the payload of an SSE ``error:`` field
    (llama.cpp). The stream is over either way; ``retryable`` says whether asking again could help.
    """
    if isinstance(error, str):
        error = _parse_json(redact(error, secrets)) or redact(error, secrets)
    evidence = _evidence(error)
    said = redact(provider_message(error), secrets) or "no details given"
    where = f" ({provider})" if provider else ""
    detail = redact(json.dumps(error, ensure_ascii=False), secrets)[:_DETAIL_LIMIT]
    if _is_overflow(evidence, None):
        return ProviderFailure(
            kind="context_overflow",
            message=f"the conversation is too long for the model's context window{where}: {said}",
            detail=detail,
            overflow=_overflow_numbers_of(evidence, error),
        )
    status = _status_code(error)
    if status is not None:
        # The error says which HTTP status it stands for: judge it as that status would be.
        as_http = classify_http_error(
            status,
            json.dumps({"error": _error_object(error)}, ensure_ascii=False),
            secrets=secrets,
            where=f"error {status} inside a 200 response{where}",
        )
        if as_http.kind in ("quota", "credits", "auth", "forbidden", "not_found"):
            return attrs.evolve(as_http, detail=detail)
        retryable = as_http.retryable
    else:
        retryable = bool(
            evidence.markers & _RETRYABLE_STREAM_CODES or evidence.markers & _RETRYABLE_ERROR_TYPES
        )
    return ProviderFailure(
        kind="stream_error",
        message=f"provider error during the response{where}: {said}",
        status=status,
        retryable=retryable,
        detail=detail,
    )


def _status_code(error: object) -> int | None:
    """The HTTP status an in-band error object names in its ``code`` (int or digits)."""
    code = _error_object(error).get("code")
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    if isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599:
        return code
    return None


def connection_failure(description: str) -> ProviderFailure:
    """The provider could not be reached, or hung up before answering; worth retrying."""
    return ProviderFailure(
        kind="connection",
        message=f"could not reach the provider: {description}",
        retryable=True,
    )


def stream_interrupted(description: str = "") -> ProviderFailure:
    """A 200 stream that ended before a finish reason or ``[DONE]``."""
    why = f": {description}" if description else ""
    return ProviderFailure(
        kind="interrupted",
        message=f"the response was cut off before the model finished{why}",
    )


def stream_stalled(seconds: float) -> ProviderFailure:
    """A 200 stream that sent no content (keep-alive comments don't count) for ``seconds``."""
    return ProviderFailure(
        kind="stalled",
        message=f"provider sent no content for {seconds:g} s",
    )


def stream_overdue(seconds: float) -> ProviderFailure:
    """A 200 stream still going when the whole-request deadline passed."""
    return ProviderFailure(
        kind="stalled",
        message=f"provider did not finish the response within {seconds:g} s",
    )


def malformed_response(description: str) -> ProviderFailure:
    return ProviderFailure(
        kind="malformed",
        message=f"the provider sent a response seri cannot read: {_shorten(description)}",
    )
