"""What went wrong with a model call, in words a person can act on, and whether to try again.

Everything here is pure: the HTTP client hands in a status, the body text and the headers (and,
for an HTTP-date ``Retry-After``, the current time), and gets back a ``ProviderFailure`` value.
The retry policy is a pure decision too: the client owns the loop, the sleeping and the random
jitter, this module only says "retry after d seconds" or "stop, and here is why".

The overflow patterns come from provider-protocol.md §1.6 and reliability-anchors.md §3.2. A
context overflow must be recognised whatever the status (OpenRouter wraps some in a 502), because
resending the same request only fails again; but a rate limit that talks about tokens, or OpenAI's
``string_above_max_length``, is not one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Literal

import attrs

from seri.pure import json_text
from seri.pure.errors import EXIT_UNFINISHED, SeriError

if TYPE_CHECKING:
    from seri.pure.sse import StreamResult

FailureKind = Literal[
    "bad_request",  # 400, 422 and other 4xx the request itself caused
    "auth",  # 401
    "credits",  # 402
    "forbidden",  # 403: moderation, guardrail, permissions
    "not_found",  # 404: unknown model, or the routing pin matches no provider
    "timeout",  # 408, 504, 524
    "rate_limited",  # 429
    "quota",  # 429 that is a spent quota (a daily cap, no credit left), not a rate
    "server",  # 5xx
    "context_overflow",  # the prompt (plus the output budget) does not fit the window
    "connection",  # no HTTP answer at all: refused, reset, TLS, DNS
    "interrupted",  # a 200 stream that ended before the model finished
    "stalled",  # a 200 stream that stopped sending content
    "stream_error",  # an error event inside a 200 stream
    "malformed",  # the provider answered with something that is not the protocol
]

# Statuses worth a second attempt (openai-python's list: 408, 409 and 429, and every 5xx).
RETRYABLE_STATUSES = frozenset({408, 409, 429})

# Backoff without a server hint: 0.5 s doubling up to 8 s (openai-python's constants).
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0

# How much of a provider's message a person is shown, and how much of the body is kept.
_MESSAGE_LIMIT = 300
_DETAIL_LIMIT = 2000


@attrs.frozen
class OverflowNumbers:
    """Token counts an overflow message states, where it states them.

    They tell "the prompt is too long" (compact) apart from "the output budget is too big"
    (lower ``max_tokens``): if ``input_tokens`` alone is below ``limit``, the input fits.
    """

    limit: int | None = None
    requested: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    def input_fits(self) -> bool:
        return (
            self.limit is not None
            and self.input_tokens is not None
            and self.input_tokens < self.limit
            and self.output_tokens is not None
            and self.output_tokens > 0
        )


@attrs.frozen
class ProviderFailure:
    """One failed model call, classified.

    ``message`` is the line a person reads; it never contains the API key. ``detail`` keeps a
    redacted excerpt of the raw body for the trajectory. ``retry_after`` is the server's hint in
    seconds, when it gave one.
    """

    kind: FailureKind
    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    detail: str = ""
    overflow: OverflowNumbers | None = None
    # A 402 "can only afford N tokens": the output budget the account can still pay for.
    affordable_tokens: int | None = None


@attrs.frozen
class RetryPlan:
    """The retry loop's next step: sleep ``delay`` s and try again, or stop with ``failure``."""

    retry: bool
    delay: float
    failure: ProviderFailure


# --- exceptions ------------------------------------------------------------------------------
# The names say what happened (``except ContextOverflow``), so they skip the "Error" suffix.


class ProviderError(SeriError):
    """A model call failed. ``failure`` says how; ``partial`` holds what a stream delivered."""

    exit_code = EXIT_UNFINISHED

    def __init__(self, failure: ProviderFailure, partial: StreamResult | None = None) -> None:
        super().__init__(failure.message)
        self.failure = failure
        self.partial = partial


class BadRequest(ProviderError):
    """The provider refused the request as invalid (400, 422, other 4xx)."""


class InvalidApiKey(ProviderError):
    """401: the key is wrong, disabled or missing."""


class InsufficientCredits(ProviderError):
    """402: the account or key is out of credits."""


class Forbidden(ProviderError):
    """403: moderation, a guardrail or missing permissions blocked the request."""


class ModelNotFound(ProviderError):
    """404: no such model, or no provider satisfies the routing pin."""


class RateLimited(ProviderError):
    """429 that retrying within the budget did not get past."""


class QuotaExhausted(ProviderError):
    """429 for a quota that is spent (a daily cap, no credit): waiting seconds cannot help."""


class ProviderUnavailable(ProviderError):
    """5xx or 408 that retrying within the budget did not get past."""


class ProviderConnectionError(ProviderError):
    """The provider could not be reached at all."""


class ContextOverflow(ProviderError):
    """The request does not fit the model's context window; resending it unchanged is useless."""


class StreamInterrupted(ProviderError):
    """The stream ended before the model finished; ``partial`` holds what arrived."""


class StreamStalled(ProviderError):
    """The stream stopped delivering content for too long; ``partial`` holds what arrived."""


class StreamFailed(ProviderError):
    """The provider sent an error event inside the stream; ``partial`` holds what arrived."""


class MalformedResponse(ProviderError):
    """The provider answered with something that is not the chat-completions protocol."""


_EXCEPTION_FOR: Mapping[FailureKind, type[ProviderError]] = {
    "bad_request": BadRequest,
    "auth": InvalidApiKey,
    "credits": InsufficientCredits,
    "forbidden": Forbidden,
    "not_found": ModelNotFound,
    "timeout": ProviderUnavailable,
    "rate_limited": RateLimited,
    "quota": QuotaExhausted,
    "server": ProviderUnavailable,
    "context_overflow": ContextOverflow,
    "connection": ProviderConnectionError,
    "interrupted": StreamInterrupted,
    "stalled": StreamStalled,
    "stream_error": StreamFailed,
    "malformed": MalformedResponse,
}


def to_exception(failure: ProviderFailure, partial: StreamResult | None = None) -> ProviderError:
    """The exception class that matches ``failure.kind``, carrying the failure and any partial."""
    return _EXCEPTION_FOR[failure.kind](failure, partial)


# --- secrets ---------------------------------------------------------------------------------

# Anything shaped like a bearer token or an ``sk-`` key, whoever's it is: a provider that echoes
# "Incorrect API key provided: sk-..." must not get the key into a terminal or a transcript.
_KEYLIKE = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+[A-Za-z0-9_\-.~+/=]{6,}")


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

_OVERFLOW_MARKERS = frozenset(
    {
        "context_length_exceeded",
        "exceed_context_size_error",
        "string_too_long",
        "token_limit_exceeded",
        "excluded_by:context_length",
    }
)

# Each wording with where it was seen; tests/captures/ replays a real message for each.
_OVERFLOW_TEXTS = re.compile(
    "|".join(
        (
            r"maximum context length",  # OpenAI, OpenRouter, vLLM, DeepSeek
            r"context (?:window|size|limit)",
            r"context[_ ]length",
            r"prompt is too long",  # Anthropic
            r"input token count.*exceeds the maximum",  # Gemini
            r"exceeds the maximum number of tokens allowed",
            r"maximum prompt length is \d+",  # xAI
            r"maximum input length is \d+",
            r"reduce the length of the (?:messages|input)",  # Groq
            r"is longer than the maximum model length",  # vLLM engine
            r"is longer than the model's context length",  # Together
            r"input length.*exceeds.*context length",
            r"too large for model with \d+ maximum context length",  # Mistral
            r"greater than the context length",  # LM Studio, older
            r"exceed(?:s|ed)? (?:the )?context",  # Anthropic "A + B > C", OpenAI Responses
            r"exceeded model token limit",  # Kimi / Moonshot
            r"model max length exceeded",  # Moonshot
            r"range of input length should be \[",  # Alibaba DashScope
            r"cannot truncate prompt with n_keep",  # LM Studio
            r"exceeds (?:the )?maximum allowed input length",  # Poolside, Baseten via OpenRouter
            r"requested \d+ output tokens and your prompt contains",  # vLLM
            r"too many tokens",
            r"input tokens exceed",
            r"input is too long for requested model",  # Bedrock
            r"prompt token count of \d+ exceeds the limit",  # Copilot
            r"prompt too long; exceeded",  # Ollama
            r"middle-out",
            r"context-compression plugin",
        )
    ),
    re.IGNORECASE | re.DOTALL,
)

# Rate limits that talk about tokens ("Request too large for gpt-4 ... on tokens per min"), and
# OpenAI's cap on one string's length, look like overflows but compacting does not cure them.
_NOT_OVERFLOW_TEXTS = re.compile(
    r"rate[ _-]?limit|tokens per min|\bTPM\b|requests per min|string_above_max_length",
    re.IGNORECASE,
)


def _is_overflow(evidence: _Evidence, status: int | None) -> bool:
    if "string_above_max_length" in evidence.markers:
        return False
    if any(_NOT_OVERFLOW_TEXTS.search(text) for text in evidence.texts):
        return False
    if evidence.markers & _OVERFLOW_MARKERS:
        return True
    if status == 413:
        return True
    return any(_OVERFLOW_TEXTS.search(text) for text in evidence.texts)


def is_context_overflow(status: int | None, body: str) -> bool:
    """Whether an error body (JSON or plain text) says the request is too long for the model."""
    if status in (401, 402, 403, 429):
        return False
    return _is_overflow(_evidence(body), status)


_LIMIT = re.compile(r"(?:maximum )?context length (?:is|of) (\d+)", re.IGNORECASE)

# Forms that state the window and the split between input and output, wherever they arrive.
# The names: "limit" the window, "requested" the total asked for, "text" and "tool" the input,
# "output" the output budget. A form without a "limit" group borrows it from _LIMIT.
_NUMBER_PATTERNS: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = (
    # OpenRouter: "(148000 of text input, 2211 in the output)" or with ", 380 of tool input".
    (
        re.compile(
            r"(?:requested (?:about )?(\d+) tokens )?\((\d+) of text input(?:, (\d+) of tool "
            r"input)?, (\d+) in the output\)",
            re.IGNORECASE,
        ),
        ("requested", "text", "tool", "output"),
    ),
    # Anthropic direct and via Bedrock/OpenRouter: "input length and `max_tokens` exceed context
    # limit: 149674 + 64000 > 204658".
    (re.compile(r"(\d+) \+ (\d+) > (\d+)"), ("text", "output", "limit")),
    # OpenAI, vLLM, DeepSeek: "you requested 9100 tokens (8100 in the messages, 1000 in the
    # completion)".
    (
        re.compile(
            r"requested (\d+) tokens \((\d+) in the messages, (\d+) in the completion\)",
            re.IGNORECASE,
        ),
        ("requested", "text", "output"),
    ),
    # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum
    # context length is 4096 tokens and your request has 2104 input tokens".
    (
        re.compile(
            r"is too large: (\d+)\. This model's maximum context length is (\d+) tokens and "
            r"your request has (\d+) input tokens",
            re.IGNORECASE,
        ),
        ("output", "limit", "text"),
    ),
    # vLLM: "you requested 4093 output tokens and your prompt contains at least 61444 input
    # tokens".
    (
        re.compile(
            r"requested (\d+) output tokens and your prompt contains (?:at least )?(\d+) input",
            re.IGNORECASE,
        ),
        ("output", "text"),
    ),
    (
        re.compile(
            r"maximum context length is (\d+) tokens.*?(?:messages resulted in|request has) "
            r"(\d+) (?:input )?tokens",
            re.IGNORECASE | re.DOTALL,
        ),
        ("limit", "text"),
    ),
    (re.compile(r"prompt is too long: (\d+) tokens > (\d+)", re.IGNORECASE), ("text", "limit")),
    (
        re.compile(
            r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    (
        re.compile(
            r"input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # Kimi / Moonshot: "exceeded model token limit: 262144 (requested: 269030)".
    (
        re.compile(r"model token limit: (\d+) \(requested: (\d+)\)", re.IGNORECASE),
        ("limit", "requested"),
    ),
    # LM Studio: "Cannot truncate prompt with n_keep (14169) >= n_ctx (4096)".
    (re.compile(r"n_keep \((\d+)\) >= n_ctx \((\d+)\)", re.IGNORECASE), ("text", "limit")),
    # Poolside / Baseten: "Input length 140000 exceeds the maximum allowed input length of
    # 131072 tokens."
    (
        re.compile(
            r"input length (\d+) exceeds (?:the )?maximum allowed input length of (\d+)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # Together: "The input (X tokens) is longer than the model's context length (Y tokens)".
    (
        re.compile(
            r"input \((\d+) tokens\) is longer than the model'?s context length \((\d+)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # xAI: "maximum prompt length is 131072 but the request contains 537812 tokens".
    (
        re.compile(r"maximum prompt length is (\d+) but the request contains (\d+)", re.IGNORECASE),
        ("limit", "text"),
    ),
    (
        re.compile(r"prompt token count of (\d+) exceeds the limit of (\d+)", re.IGNORECASE),
        ("text", "limit"),
    ),
    # DashScope: "Range of input length should be [1, 983616]".
    (re.compile(r"range of input length should be \[\d+, (\d+)\]", re.IGNORECASE), ("limit",)),
    # Moonshot: "model max length exceeded, max length:8192".
    (re.compile(r"max length exceeded, max length:\s*(\d+)", re.IGNORECASE), ("limit",)),
    (re.compile(r"maximum context length is (\d+)", re.IGNORECASE), ("limit",)),
)


def overflow_numbers(text: str) -> OverflowNumbers:
    """The token counts an overflow message states (all ``None`` when it states none)."""
    for pattern, names in _NUMBER_PATTERNS:
        found = pattern.search(text)
        if found is None:
            continue
        values = {
            name: int(group) for name, group in zip(names, found.groups(), strict=True) if group
        }
        if "limit" not in values:
            limit = _LIMIT.search(text)
            if limit is not None:
                values["limit"] = int(limit.group(1))
        text_tokens = values.get("text")
        tool_tokens = values.get("tool", 0)
        return OverflowNumbers(
            limit=values.get("limit"),
            requested=values.get("requested"),
            input_tokens=None if text_tokens is None else text_tokens + tool_tokens,
            output_tokens=values.get("output"),
        )
    return OverflowNumbers()


def _overflow_numbers_of(evidence: _Evidence, body: object = None) -> OverflowNumbers:
    for text in evidence.texts:
        numbers = overflow_numbers(text)
        if numbers != OverflowNumbers():
            return numbers
    return _llamacpp_fields(body)


def _llamacpp_fields(body: object) -> OverflowNumbers:
    """llama.cpp's ``exceed_context_size_error`` states its numbers as fields too; its older
    wording ("the request exceeds the available context size. try increasing the context size
    or enable context shift") has them nowhere else."""
    error = _error_object(body)
    prompt, window = error.get("n_prompt_tokens"), error.get("n_ctx")

    def count(value: object) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        return None

    return OverflowNumbers(limit=count(window), input_tokens=count(prompt))


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
_QUOTA_TEXTS = re.compile(
    r"free-models-per-day|exceeded your current quota|per-day|daily (?:limit|quota)",
    re.IGNORECASE,
)
_AFFORDABLE = re.compile(r"can only afford (\d+)", re.IGNORECASE)


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


# --- retrying --------------------------------------------------------------------------------


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


def plan_retry(
    failure: ProviderFailure,
    attempt: int,
    *,
    max_attempts: int,
    cap_seconds: float,
    jitter: float,
) -> RetryPlan:
    """Whether to retry after attempt number ``attempt`` (from 1) failed with ``failure``.

    A server hint is obeyed when it is within ``cap_seconds``; beyond it, waiting inside one
    command is pointless, so the call fails at once saying roughly when to come back. Without a
    hint the delay is ``backoff_delay``.
    """
    if not failure.retryable:
        return RetryPlan(retry=False, delay=0.0, failure=failure)
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
