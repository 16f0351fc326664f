"""What a provider's error answer means: a ``ProviderFailure`` a person can act on.

Everything here is pure: the HTTP client hands in a status, the body text and the headers (and,
for an HTTP-date ``Retry-After``, the current time), and gets back a ``ProviderFailure`` value
(``provider_failure``). Whether the wording is a context overflow is the overflow table's
(``overflow_table``) to say; whether and when to try again is ``retry_plan``'s, from the hints
the answer gave (``retry_hints``). Reading the body is ``provider_error_body``'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

import attrs

from seri.pure.inputs.lazy_pattern import LazyPattern
from seri.pure.provider.overflow_table import (
    overflow_numbers,
    overflow_numbers_in_fields,
    says_overflow,
)
from seri.pure.provider.provider_error_body import (
    Evidence,
    error_object,
    evidence_of,
    parsed_json,
    provider_message,
    redact,
    shortened,
)
from seri.pure.provider.provider_failure import FailureKind, OverflowNumbers, ProviderFailure
from seri.pure.provider.retry_hints import (
    body_retry_after,
    parse_retry_after,
    quota_message,
    should_retry,
)

# How much of the body is kept.
_DETAIL_LIMIT = 2000


# --- context overflow ------------------------------------------------------------------------


def _is_overflow(evidence: Evidence, status: int | None) -> bool:
    return says_overflow(evidence.texts, evidence.markers, status)


def is_context_overflow(status: int | None, body: str) -> bool:
    """Whether an error body (JSON or plain text) says the request is too long for the model."""
    if status in (401, 402, 403, 429):
        return False
    return _is_overflow(evidence_of(body), status)


def _overflow_numbers_of(evidence: Evidence, body: object = None) -> OverflowNumbers:
    for text in evidence.texts:
        numbers = overflow_numbers(text)
        if numbers != OverflowNumbers():
            return numbers
    return overflow_numbers_in_fields(error_object(body))


# A 402 that names how many tokens the credit can still pay for.
_AFFORDABLE = LazyPattern(r"can only afford (\d+)", re.IGNORECASE)


# --- classification --------------------------------------------------------------------------


def _status_label(status: int, body: object) -> tuple[FailureKind, str]:
    if status == 400:
        return "bad_request", "the provider rejected the request as invalid"
    if status == 401:
        return "auth", "invalid API key: the provider did not accept the credentials"
    if status == 402:
        return "credits", "insufficient credits on the provider account or key"
    if status == 403:
        metadata = error_object(body).get("metadata")
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
    parsed = parsed_json(body)
    structured: object = parsed if parsed is not None else body
    said = provider_message(structured)
    detail = body[:_DETAIL_LIMIT]
    bodiless = not body.strip()
    evidence = evidence_of(structured)
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
        quota = quota_message(evidence, structured, headers, now)
        if quota is not None:
            return ProviderFailure(
                kind="quota", message=f"{quota} ({where})", status=status, detail=detail
            )
    kind, label = _status_label(status, structured)
    hint = parse_retry_after(headers, now)
    if hint is None:
        hint = body_retry_after(structured, now)
    affordable = None
    if status == 402:
        found = next((m for t in evidence.texts if (m := _AFFORDABLE.search(t))), None)
        affordable = int(found.group(1)) if found else None
    return ProviderFailure(
        kind=kind,
        message=f"{label} ({where}): {said}" if said else f"{label} ({where})",
        status=status,
        retryable=should_retry(status, headers, structured),
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
        error = parsed_json(redact(error, secrets)) or redact(error, secrets)
    evidence = evidence_of(error)
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
            json.dumps({"error": error_object(error)}, ensure_ascii=False),
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
    code = error_object(error).get("code")
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
        message=f"the provider sent a response seri cannot read: {shortened(description)}",
    )
