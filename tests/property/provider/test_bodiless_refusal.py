"""A refusal with no body (Cerebras answers an over-long request so): when it is taken for an
overflow (ProviderFailure.probable_overflow)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from seri.pure.provider.provider_errors import classify_http_error

statuses = st.sampled_from([400, 404, 413, 422, 500])
blank = st.text(alphabet=" \t\r\n", max_size=5)
tokens = st.integers(0, 10**7)


@given(statuses, blank, tokens, tokens)
def test_a_bodiless_400_is_an_overflow_on_a_big_request_only(
    status: int, body: str, request: int, window: int
) -> None:
    failure = classify_http_error(status, body)
    assert failure.bodiless
    probable = failure.probable_overflow(request, window)
    assert probable == (status == 400 and window > 0 and 2 * request >= window)
    if status == 413:
        assert failure.kind == "context_overflow"
    if status == 400:
        assert failure.kind == "bad_request" and not failure.retryable


@given(statuses, st.text(min_size=1).filter(str.strip), tokens, tokens)
def test_a_refusal_with_a_body_is_never_guessed(
    status: int, body: str, request: int, window: int
) -> None:
    failure = classify_http_error(status, body)
    assert not failure.bodiless
    assert not failure.probable_overflow(request, window)


@given(tokens, tokens, tokens)
def test_a_bigger_request_is_no_less_an_overflow(small: int, extra: int, window: int) -> None:
    failure = classify_http_error(400, "")
    if failure.probable_overflow(small, window):
        assert failure.probable_overflow(small + extra, window)
