"""One failed model call as a value: its kind, the words a person reads, the numbers it states.

``ProviderFailure`` is what the classification (``provider_errors``) returns, the retry
planning (``retry_plan``) reads and the provider client hands back when no answer started.
It stays a value all the way to the loop: a refused request is an outcome of calling a model,
not an exceptional one, so no exception carries it.
"""

from __future__ import annotations

from typing import Literal

import attrs

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


# A bodiless 400 is taken for an overflow on a request of at least 1/this of the window.
PROBABLE_OVERFLOW_SHARE_INVERSE = 2


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
    # The answer had no body at all (nothing but white space).
    bodiless: bool = False

    def probable_overflow(self, request_tokens: int, window_tokens: int) -> bool:
        """A bodiless 400 on a request at least half the window: taken for an overflow.

        Some providers answer an over-long request with a 400 (or 413) and no body at all
        (Cerebras; pi's overflow table: "400/413 status code (no body)"). A 413 says "too
        large" by itself and is an overflow whatever its size; a 400 says only "bad request",
        so it is read as an overflow only when the request is big enough to be one, and the
        caller does so once (after compacting, a second one is a plain error). A small
        request's bodiless 400 is a plain error.
        """
        return (
            self.bodiless
            and self.status == 400
            and window_tokens > 0
            and request_tokens * PROBABLE_OVERFLOW_SHARE_INVERSE >= window_tokens
        )
