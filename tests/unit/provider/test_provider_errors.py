"""Classifying provider failures: overflow forms, status messages, Retry-After, backoff."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.provider.overflow_table import overflow_numbers
from seri.pure.provider.provider_error_body import redact
from seri.pure.provider.provider_errors import (
    classify_http_error,
    classify_stream_error,
    is_context_overflow,
    stream_stalled,
)
from seri.pure.provider.provider_failure import ProviderFailure
from seri.pure.provider.retry_hints import parse_retry_after, rate_limit_reset
from seri.pure.provider.retry_plan import backoff_delay, plan_retry


def envelope(message: str, code: object = 400, **extra: object) -> str:
    return json.dumps({"error": {"code": code, "message": message, **extra}})


OVERFLOWS = {
    "openrouter numeric code": (
        400,
        envelope(
            "This endpoint's maximum context length is 131072 tokens. However, you requested "
            "about 138956 tokens (7884 of text input, 131072 in the output). Please reduce the "
            'length of either one, or use the "middle-out" transform to compress your prompt '
            "automatically.",
            metadata={"provider_name": None},
        ),
    ),
    "openrouter with tools, plugin wording": (
        400,
        envelope(
            "This endpoint's maximum context length is 8192 tokens. However, you requested about "
            "65810 tokens (1430 of text input, 380 of tool input, 64000 in the output). Please "
            "reduce the length of either one, or use the context-compression plugin to compress "
            "your prompt automatically."
        ),
    ),
    "openrouter typed": (
        400,
        envelope("Too long", metadata={"error_type": "context_length_exceeded"}),
    ),
    "openrouter availability constraint": (
        404,
        json.dumps(
            {
                "error": {
                    "code": 404,
                    "message": "No endpoints available",
                    "availability": {
                        "code": "constraint_filtered",
                        "excluded_by": ["context_length"],
                    },
                }
            }
        ),
    ),
    "openai": (
        400,
        json.dumps(
            {
                "error": {
                    "message": "This model's maximum context length is 8192 tokens. However, your "
                    "messages resulted in 8227 tokens. Please reduce the length of the messages.",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "code": "context_length_exceeded",
                }
            }
        ),
    ),
    "openai older": (
        400,
        envelope(
            "This model's maximum context length is 4097 tokens. However, you requested 4118 "
            "tokens (3118 in the messages, 1000 in the completion). Please reduce the length of "
            "the messages or completion.",
            code=None,
        ),
    ),
    "openai responses api": (
        400,
        json.dumps(
            {
                "error": {
                    "message": "Your input exceeds the context window of this model. Please "
                    "adjust your input and try again.",
                    "type": "invalid_request_error",
                    "param": "input",
                    "code": "context_length_exceeded",
                }
            }
        ),
    ),
    "502 wrapper with metadata.raw": (
        502,
        json.dumps(
            {
                "error": {
                    "message": "Provider returned error",
                    "code": 502,
                    "metadata": {
                        "provider_name": "DeepInfra",
                        "raw": json.dumps(
                            {
                                "error": {
                                    "message": "This model's maximum context length is 16000 "
                                    "tokens. However, you requested 17165 tokens (15165 in the "
                                    "messages, 2000 in the completion)."
                                }
                            }
                        ),
                    },
                }
            }
        ),
    ),
    "502 wrapper top-level (RA.Aid#41)": (
        502,
        json.dumps(
            {
                "message": "This model's maximum context length is 16000 tokens. However, you "
                "requested 17165 tokens",
                "code": 502,
                "metadata": {"provider_name": "DeepInfra", "raw": {}},
            }
        ),
    ),
    "anthropic via openrouter": (
        400,
        envelope(
            "Provider returned error",
            metadata={
                "provider_name": "Anthropic",
                "raw": json.dumps(
                    {
                        "type": "error",
                        "error": {
                            "type": "invalid_request_error",
                            "message": "prompt is too long: 217779 tokens > 200000 maximum",
                        },
                    }
                ),
            },
        ),
    ),
    "gemini via openrouter": (
        400,
        envelope(
            "Provider returned error",
            metadata={
                "raw": "The input token count (1196265) exceeds the maximum number of tokens "
                "allowed (1048575)."
            },
        ),
    ),
    "llama.cpp": (
        400,
        json.dumps(
            {
                "error": {
                    "code": 400,
                    "message": "request (17993 tokens) exceeds the available context size "
                    "(16384 tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 17993,
                    "n_ctx": 16384,
                }
            }
        ),
    ),
    "vllm current": (
        400,
        json.dumps(
            {
                "error": {
                    "message": "This model's maximum context length is 32768 tokens. However, "
                    "your request has 40000 input tokens. Please reduce the length of the input "
                    "messages.",
                    "type": "BadRequestError",
                    "param": None,
                    "code": 400,
                }
            }
        ),
    ),
    "vllm old unwrapped": (
        400,
        json.dumps(
            {
                "object": "error",
                "message": "The decoder prompt (length 8825) is longer than the maximum model "
                "length of 8192.",
                "code": 400,
            }
        ),
    ),
    "vllm max_tokens too large": (
        400,
        envelope(
            "'max_tokens' or 'max_completion_tokens' is too large: 4096. This model's maximum "
            "context length is 8192 tokens and your request has 5000 input tokens "
            "(4096 > 8192 - 5000)."
        ),
    ),
    "xai": (
        400,
        envelope("This model's maximum prompt length is 131072 but the request contains 537812"),
    ),
    "mistral": (
        400,
        envelope(
            "Prompt contains 40000 tokens, too large for model with 32768 maximum context length"
        ),
    ),
    "lm studio": (
        400,
        envelope(
            "The number of tokens to keep from the initial prompt is greater than the context "
            "length"
        ),
    ),
    "bedrock": (400, envelope("input is too long for requested model")),
    "copilot": (400, envelope("prompt token count of 130000 exceeds the limit of 128000")),
    "minimax": (400, envelope("context window exceeds limit")),
    "kimi": (400, envelope("Your request exceeded model token limit: 131072")),
    "ollama": (400, envelope("the input length exceeds the context length")),
    "groq": (400, envelope("Please reduce the length of the messages or completion.")),
    "413 no body": (413, ""),
    "413 payload": (413, "Payload too large"),
}

NOT_OVERFLOWS = {
    "400 echoing 429": (
        400,
        envelope(
            "Provider returned error",
            metadata={"raw": '{"error":{"code":429,"message":"Resource has been exhausted"}}'},
        ),
    ),
    "400 saying 429 in words": (400, envelope("Upstream error 429: Too Many Requests")),
    "string_above_max_length": (
        400,
        json.dumps(
            {
                "error": {
                    "message": "Invalid 'messages[1].content': string too long. Expected a string "
                    "with maximum length 10485760, but got a string with length 12000000 instead.",
                    "type": "invalid_request_error",
                    "param": "messages[1].content",
                    "code": "string_above_max_length",
                }
            }
        ),
    ),
    "groq tpm 413": (
        413,
        envelope(
            "Request too large for model llama-3 on tokens per min (TPM): Limit 6000, "
            "Requested 9000, please reduce your message size and try again.",
            code="rate_limit_exceeded",
        ),
    ),
    "429 with tokens": (429, envelope("Rate limit reached: too many tokens per minute")),
    "plain 400": (400, envelope("tools.0.function.name: String should match pattern")),
    "401": (401, envelope("No auth credentials found", code=401)),
    "503": (503, envelope("No available model provider that meets your routing requirements")),
}


@pytest.mark.parametrize("case", sorted(OVERFLOWS))
def test_every_overflow_form_is_recognised(case: str) -> None:
    status, body = OVERFLOWS[case]
    assert is_context_overflow(status, body)
    failure = classify_http_error(status, body)
    assert failure.kind == "context_overflow"
    assert not failure.retryable
    assert "too long" in failure.message


@pytest.mark.parametrize("case", sorted(NOT_OVERFLOWS))
def test_lookalikes_are_not_overflow(case: str) -> None:
    status, body = NOT_OVERFLOWS[case]
    assert not is_context_overflow(status, body)
    assert classify_http_error(status, body).kind != "context_overflow"


def test_400_echoing_429_is_not_retried_as_a_rate_limit() -> None:
    status, body = NOT_OVERFLOWS["400 echoing 429"]
    failure = classify_http_error(status, body)
    assert failure.kind == "bad_request"
    assert not failure.retryable
    assert "Resource has been exhausted" in failure.message


def test_overflow_numbers_tell_output_budget_from_input() -> None:
    numbers = overflow_numbers(
        "This endpoint's maximum context length is 131072 tokens. However, you requested about "
        "138956 tokens (7884 of text input, 131072 in the output)."
    )
    assert (numbers.limit, numbers.input_tokens, numbers.output_tokens) == (131072, 7884, 131072)
    assert numbers.input_fits()
    tools = overflow_numbers(
        "maximum context length is 8192 tokens. However, you requested about 65810 tokens "
        "(1430 of text input, 380 of tool input, 64000 in the output)"
    )
    assert tools.input_tokens == 1810
    anthropic = overflow_numbers("prompt is too long: 217779 tokens > 200000 maximum")
    assert (anthropic.limit, anthropic.input_tokens) == (200000, 217779)
    assert not anthropic.input_fits()
    failure = classify_http_error(*OVERFLOWS["openrouter numeric code"])
    assert failure.overflow is not None
    assert failure.overflow.input_fits()


@pytest.mark.parametrize(
    ("status", "kind", "words", "retryable"),
    [
        (400, "bad_request", "rejected the request", False),
        (401, "auth", "invalid API key", False),
        (402, "credits", "insufficient credits", False),
        (403, "forbidden", "forbidden", False),
        (404, "not_found", "model not found", False),
        (408, "timeout", "timed out", True),
        (422, "bad_request", "refused", False),
        (429, "rate_limited", "rate limited", True),
        (500, "server", "internal error", True),
        (502, "server", "model is down", True),
        (503, "server", "no provider available", True),
        (524, "timeout", "timed out", True),
        (529, "server", "overloaded", True),
    ],
)
def test_status_classification(status: int, kind: str, words: str, retryable: bool) -> None:
    failure = classify_http_error(status, envelope("upstream said so", code=status))
    assert failure.kind == kind
    assert words in failure.message
    assert "upstream said so" in failure.message
    assert f"HTTP {status}" in failure.message
    assert failure.retryable is retryable


def test_moderation_403_names_the_reasons() -> None:
    body = envelope(
        "Input was flagged",
        code=403,
        metadata={"reasons": ["violence"], "flagged_input": "...", "provider_name": "OpenAI"},
    )
    failure = classify_http_error(403, body)
    assert failure.message.startswith("blocked by moderation")
    assert "violence" in failure.message


def test_api_key_never_appears() -> None:
    key = "sk-or-v1-0123456789abcdef0123456789abcdef"
    body = envelope(f"Incorrect API key provided: {key}", code=401)
    failure = classify_http_error(401, body, secrets=(key,))
    assert failure.kind == "auth"
    for text in (failure.message, failure.detail, repr(failure)):
        assert key not in text
        assert "0123456789abcdef" not in text
    # Key-shaped text is scrubbed even when the key was not handed in.
    assert "sk-other-secret-value" not in redact("bad key sk-other-secret-value given")
    assert "tok123456" not in redact("Authorization: Bearer tok123456")


def test_x_should_retry_and_availability_override_the_status() -> None:
    assert not classify_http_error(503, "", {"x-should-retry": "false"}).retryable
    assert classify_http_error(400, "", {"X-Should-Retry": "true"}).retryable
    body = json.dumps(
        {
            "error": {
                "code": 404,
                "message": "gone",
                "availability": {"retryable": True, "retry_after": 4},
            }
        }
    )
    failure = classify_http_error(404, body)
    assert failure.retryable
    assert failure.retry_after == 4.0


# --- Retry-After -----------------------------------------------------------------------------

NOW = 1_790_000_000.0  # 2026-09-21T...Z


def http_date(offset: float) -> str:
    from email.utils import formatdate

    return formatdate(NOW + offset, usegmt=True)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "3"}, 3.0),
        ({"retry-after": "2.5"}, 2.5),
        ({"Retry-After": " 0 "}, 0.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"retry-after-ms": "junk", "Retry-After": "9"}, 9.0),
        ({"Retry-After": http_date(120)}, 120.0),
        ({"Retry-After": http_date(-30)}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "-5"}, 0.0),
        ({"Retry-After": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    assert parse_retry_after(headers, now=NOW) == expected


def test_http_date_needs_now() -> None:
    assert parse_retry_after({"Retry-After": http_date(60)}) is None


def test_429_carries_the_hint() -> None:
    failure = classify_http_error(429, envelope("slow down", 429), {"Retry-After": "7"}, now=NOW)
    assert failure.retry_after == 7.0


# --- backoff and the retry plan --------------------------------------------------------------


@given(st.integers(min_value=1, max_value=100), st.floats(min_value=0, max_value=1))
def test_backoff_stays_within_jitter_bounds(retry: int, jitter: float) -> None:
    nominal = min(0.5 * 2 ** (retry - 1), 8.0)
    delay = backoff_delay(retry, jitter)
    assert 0.75 * nominal <= delay <= nominal


def test_backoff_schedule_doubles_to_the_cap() -> None:
    assert [backoff_delay(n, 0.0) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 8, 8]
    assert backoff_delay(1, 1.0) == 0.375


def rate_limited(hint: float | None) -> ProviderFailure:
    return ProviderFailure(
        kind="rate_limited",
        message="rate limited (HTTP 429)",
        status=429,
        retryable=True,
        retry_after=hint,
    )


def test_plan_obeys_a_hint_within_the_cap() -> None:
    plan = plan_retry(rate_limited(3.0), 1, max_attempts=5, cap_seconds=60, jitter=0.5)
    assert plan.retry
    assert plan.delay == 3.0


def test_plan_fails_at_once_when_the_hint_is_beyond_the_cap() -> None:
    plan = plan_retry(rate_limited(3600.0), 1, max_attempts=5, cap_seconds=60, jitter=0.5)
    assert not plan.retry
    assert plan.failure.message.startswith("rate limited, retry after ~1 h")
    assert plan.failure.kind == "rate_limited"


def test_plan_backs_off_without_a_hint_and_stops_at_max_attempts() -> None:
    delays = []
    for attempt in range(1, 10):
        plan = plan_retry(rate_limited(None), attempt, max_attempts=5, cap_seconds=60, jitter=0.0)
        if not plan.retry:
            assert "gave up after 5 attempts" in plan.failure.message
            break
        delays.append(plan.delay)
    assert delays == [0.5, 1.0, 2.0, 4.0]


def test_plan_never_retries_what_is_not_retryable() -> None:
    failure = classify_http_error(401, envelope("nope", 401))
    assert not plan_retry(failure, 1, max_attempts=5, cap_seconds=60, jitter=0).retry


def test_stream_errors() -> None:
    failure = classify_stream_error(
        {"code": "server_error", "message": "Provider disconnected unexpectedly"}, "OpenAI"
    )
    assert failure.kind == "stream_error"
    assert failure.retryable
    assert "Provider disconnected unexpectedly" in failure.message
    assert "OpenAI" in failure.message
    overflow = classify_stream_error(
        {"code": 400, "message": "x", "metadata": {"error_type": "context_length_exceeded"}}
    )
    assert overflow.kind == "context_overflow"
    stalled = stream_stalled(90)
    assert stalled.kind == "stalled"
    assert stalled.message == "provider sent no content for 90 s"


reset_stamps = (
    st.floats(allow_nan=True, allow_infinity=True).map(repr)
    | st.integers(min_value=-(10**30), max_value=10**400).map(str)
    | st.text(max_size=20)
)


@given(reset_stamps, st.sampled_from(["free-models-per-day", "limit_rpm/minute"]))
def test_any_rate_limit_reset_stamp_is_survived(stamp: str, message: str) -> None:
    """OpenRouter's X-RateLimit-Reset is the provider's word, not a promise: a stamp past any
    calendar (1e20 ms, 1e308, 400 digits) or nonsense is not believed, never a crash."""
    headers = {"X-RateLimit-Limit": "50", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": stamp}
    body = json.dumps(
        {
            "error": {
                "code": 429,
                "message": f"Rate limit exceeded: {message}",
                "metadata": {"headers": headers, "provider_name": None},
            }
        }
    )
    failure = classify_http_error(429, body, {}, now=1_761_200_000.0)
    assert failure.status == 429
    reset = rate_limit_reset(json.loads(body))
    if reset is not None:
        assert 0 < reset < 253_402_300_800  # before the year 10000
    if failure.retry_after is not None:
        assert 0 <= failure.retry_after < 253_402_300_800


def test_the_same_internal_error_twice_in_a_row_stops_the_retries() -> None:
    body = envelope("Failed to parse tool call arguments as JSON", 500, type="server_error")
    first = classify_http_error(500, body)
    assert plan_retry(first, 1, max_attempts=5, cap_seconds=60, jitter=0).retry
    again = classify_http_error(500, body)
    plan = plan_retry(again, 2, max_attempts=5, cap_seconds=60, jitter=0, previous=first)
    assert not plan.retry
    assert "the same answer to 2 attempts in a row" in plan.failure.message
    # Another body, or another status (a gateway's 502 page is the same every time it is
    # down for a moment), is retried as before.
    other = classify_http_error(500, envelope("worker 7 crashed", 500))
    assert plan_retry(other, 2, max_attempts=5, cap_seconds=60, jitter=0, previous=first).retry
    gateway = classify_http_error(502, "<html>Bad Gateway</html>")
    assert plan_retry(gateway, 2, max_attempts=5, cap_seconds=60, jitter=0, previous=gateway).retry
