"""One failed model call as a value: its kind, the words a person reads, the numbers it states.

``ProviderFailure`` is what the classification (``provider_errors``) returns and the retry
planning (``retry_plan``) reads; ``to_exception`` turns it into the matching ``ProviderError``
for callers that stop on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import attrs

from seri.pure.errors import EXIT_UNFINISHED, SeriError

if TYPE_CHECKING:
    from seri.pure.stream_assembly import StreamResult

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
