"""The HTTP client for an OpenAI-compatible chat-completions API (OpenRouter by default).

Thin on purpose: it sends the body ``seri.pure.provider.wire`` built over httpx
(``seri.io.provider.provider_connection``: the URLs, the key, the timeouts, the process's client),
has the answer read by ``seri.io.provider.provider_stream`` (the SSE parser, the assembler and the
watchdog), asks ``seri.pure.provider.provider_errors`` what every failure means and
``seri.pure.provider.retry_plan``
whether to retry. What it owns is the part only I/O can do:

* the one retry loop (nothing retries underneath it), and only before any of the answer has
  arrived: a request whose stream already started is never sent twice, since the caller may
  have shown or acted on part of it;
* the wait for an answer (``seri.pure.provider.answer_wait``, watched by
``seri.io.provider.provider_stream``):
  a local server gets the time its prompt may take to read (the request's read timeout), and
  llama.cpp is asked for its progress;
* what the server says of its models (``GET /models`` and the local servers' own questions).

httpx costs ~55 ms to import, so nothing imports this module before it is needed, and
``seri chat -p`` starts importing it in a thread while it opens the session
(``seri.io.provider.http_client.load_in_background``). What reads an answer (the SSE parser, the
assembler, the error classifier and the retry planner) is imported once there is an answer to
read: the request goes out first, and the server takes longer to answer than they take to load
(``scripts/bench/first_byte.py`` measures the first request byte beside other agents).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from seri.io.provider.provider_connection import JSON_HEADERS, NoClient, ProviderConnection, encoded
from seri.pure.provider.answer_wait import (
    AnswerWait,
    is_local_server,
    prompt_progress,
    prompt_seconds,
    speaks_llama_cpp,
)

if TYPE_CHECKING:
    from seri.pure.provider.provider_failure import ProviderFailure
    from seri.pure.provider.sse import SSEDone, SSEEvent
    from seri.pure.provider.stream_assembly import StreamResult

# attempt number (from 1), HTTP status (None when there was no answer), delay in s, reason.
RetryCallback = Callable[[int, int | None, float, str], None]

_ERROR_BODY_LIMIT = 64 * 1024


class ProviderClient:
    """Talks to ``{base_url}/chat/completions`` and ``{base_url}/models``.

    ``sleep``, the clocks and ``jitter`` (a source of fractions in [0, 1)) are parameters so
    that tests can run the real loop over real HTTP without waiting. ``idle_timeout`` bounds the
    silence between signs of life (events and keep-alive comments), ``total_timeout`` one
    attempt as a whole; a local server (``server_is_local``, by default from the URL) may take
    longer by the time its prompt could take to read (``seri.pure.provider.answer_wait``).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        max_attempts: int = 5,
        retry_cap_seconds: float = 60.0,
        idle_timeout: float = 90.0,
        total_timeout: float = 600.0,
        connect_timeout: float = 10.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        jitter: Callable[[], float] | None = None,
        on_retry: RetryCallback | None = None,
        referer: str = "",
        title: str = "",
        server_is_local: bool | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._connection = ProviderConnection(
            base_url, api_key, connect_timeout=connect_timeout, referer=referer, title=title
        )
        self.max_attempts = max_attempts
        self.retry_cap_seconds = retry_cap_seconds
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self._local = is_local_server(base_url) if server_is_local is None else server_is_local
        # Set once a local server's answer shows it is llama.cpp: ask it for prompt progress.
        self._asks_progress = False
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock
        self._jitter = jitter if jitter is not None else _random_fraction
        self._on_retry = on_retry

    def __repr__(self) -> str:
        return f"ProviderClient(base_url={self._connection.base_url!r}, api_key=[redacted])"

    def close(self) -> None:
        """Nothing to release: the connections belong to the process's client, which keeps
        them alive for the next ProviderClient of the run (``seri.io.provider.http_client``)."""

    def __enter__(self) -> ProviderClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # --- chat ---------------------------------------------------------------------------------

    def stream_chat(
        self,
        body: Mapping[str, Any] | bytes,
        on_text: Callable[[str], None] | None = None,
        *,
        on_reasoning: Callable[[str], None] | None = None,
    ) -> StreamResult | ProviderFailure:
        """Send one chat request and return the assembled answer, or why there is none.

        A ``ProviderFailure`` comes back when no answer started: the request was refused
        (``failure.kind`` says how: ``context_overflow``, ``auth``, ``rate_limited``...), or
        retries ran out. ``body`` may be the JSON already encoded (the agent loop splices cached
        messages into it). Once an answer has started, a ``StreamResult`` is returned whatever
        happens next; a stream that was cut, stalled or carried an error event comes back with
        ``complete=False`` and its ``failure``.
        """
        attempt = 0
        previous: ProviderFailure | None = None
        while True:
            attempt += 1
            outcome = self._attempt(body, on_text, on_reasoning)
            # Here, not at the top: the first attempt's request is out before it loads.
            from seri.pure.provider.provider_failure import ProviderFailure

            if not isinstance(outcome, ProviderFailure):
                return outcome
            from seri.pure.provider.retry_plan import plan_retry

            plan = plan_retry(
                outcome,
                attempt,
                max_attempts=self.max_attempts,
                cap_seconds=self.retry_cap_seconds,
                jitter=self._jitter(),
                previous=previous,
            )
            previous = outcome
            if not plan.retry:
                return plan.failure
            if self._on_retry is not None:
                self._on_retry(attempt, outcome.status, plan.delay, outcome.message)
            self._sleep(plan.delay)

    def _attempt(
        self,
        body: Mapping[str, Any] | bytes,
        on_text: Callable[[str], None] | None,
        on_reasoning: Callable[[str], None] | None,
    ) -> StreamResult | ProviderFailure:
        content = encoded(body)
        if self._asks_progress:
            content = _asking_progress(content)
        wait = AnswerWait(
            self.idle_timeout,
            self.total_timeout,
            self._clock(),
            prompt=prompt_seconds(len(content)) if self._local else 0.0,
        )
        try:
            client = self._connection.client()
            # httpx's read timeout is per network read and set per request: the first wait,
            # which for a local server includes the time its prompt may take (some answer
            # their headers only once it is read). After the first sign of life the watchdog
            # holds the shorter silence limit on every arrival; a local server that then goes
            # silent altogether is caught by this read timeout.
            with client.stream(
                "POST",
                self._connection.url("chat/completions"),
                content=content,
                headers=self._connection.headers(JSON_HEADERS),
                timeout=self._connection.timeout(wait.first_wait),
            ) as response:
                # The request is out: what reads its answer loads now (see the top).
                from seri.io.provider.provider_stream import read_stream, read_whole

                if response.status_code != 200:
                    refusal = self._refusal(response)
                    said = refusal.detail + refusal.message
                    if self._asks_progress and "return_progress" in said:
                        # Not llama.cpp after all (a proxy in front of a stricter server).
                        self._asks_progress = False
                        return self._attempt(body, on_text, on_reasoning)
                    return refusal
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    return read_whole(response, on_text)
                return read_stream(
                    response,
                    wait,
                    on_text,
                    on_reasoning,
                    clock=self._clock,
                    said=self._connection.said,
                    note_server=self._note_server,
                )
        except httpx.TimeoutException as exc:
            from seri.pure.provider.provider_errors import connection_failure

            return connection_failure(f"no answer in time ({type(exc).__name__})")
        except (httpx.TransportError, httpx.InvalidURL, NoClient) as exc:
            from seri.pure.provider.provider_errors import connection_failure

            return connection_failure(self._connection.said(exc))

    def _refusal(self, response: httpx.Response) -> ProviderFailure:
        from seri.io.provider.provider_stream import read_at_most
        from seri.pure.provider.provider_errors import classify_http_error

        raw = read_at_most(response.iter_bytes(), _ERROR_BODY_LIMIT)
        return classify_http_error(
            response.status_code,
            raw.decode("utf-8", errors="replace"),
            response.headers,
            now=self._wall_clock(),
            secrets=self._connection.secrets,
        )

    def _note_server(self, events: list[SSEEvent | SSEDone], wait: AnswerWait, now: float) -> None:
        """Progress moves the deadline; llama.cpp's own chunk says it can send progress."""
        from seri.pure.provider.sse import SSEEvent

        for event in events:
            if not isinstance(event, SSEEvent):
                continue
            progress = prompt_progress(event.data)
            if progress is not None:
                wait.progressed(progress, now)
            elif self._local and not self._asks_progress and speaks_llama_cpp(event.data):
                self._asks_progress = True

    # --- models -------------------------------------------------------------------------------

    def context_window(self, model: str) -> int | None:
        """The model's window as the server reports it; ``None`` if it does not say.

        In order: the model's entry in ``GET {base_url}/models`` (OpenRouter's
        ``context_length``, vLLM's ``max_model_len``, llama.cpp's ``meta.n_ctx``), llama.cpp's
        ``GET /props``, Ollama's ``POST /api/show``. Any failure (network, status, shape) gives
        ``None``: the caller falls back to a configured or default window rather than refusing
        to start. (Config wins over all of this: the caller only asks when it has none.)
        """
        from seri.pure.provider.server_windows import (
            window_from_listing,
            window_from_ollama_show,
            window_from_props,
        )

        listing = self._get_json(self._connection.url("models"))
        window = window_from_listing(listing, model)
        if window is None:
            window = window_from_props(self._get_json(self._connection.server_url("props")))
        if window is None:
            window = window_from_ollama_show(
                self._post_json(self._connection.server_url("api/show"), {"model": model})
            )
        return window

    def model_ids(self) -> tuple[str, ...] | None:
        """The models ``GET {base_url}/models`` lists; None when the server lists none."""
        from seri.pure.provider.model_list import listed_model_ids

        return listed_model_ids(self._get_json(self._connection.url("models")))

    def _get_json(self, url: str) -> Any:
        return self._connection.json_answer("GET", url, None, read_timeout=self.idle_timeout)

    def _post_json(self, url: str, body: Mapping[str, Any]) -> Any:
        return self._connection.json_answer("POST", url, body, read_timeout=self.idle_timeout)


def _random_fraction() -> float:
    """A retry's jitter. random is imported when a retry draws one: it loads hashlib's
    sha512 and more, which a start pays for otherwise."""
    import random

    return random.random()  # noqa: S311 (retry jitter, not a secret)


def _asking_progress(body: bytes) -> bytes:
    """The body with llama.cpp's ``return_progress`` asked for, when it streams (the field is
    spliced in: the body may be the cached bytes the loop built)."""
    if b'"stream":true' not in body or not body.startswith(b"{") or b'"return_progress"' in body:
        return body
    rest = body[1:].lstrip()
    return b'{"return_progress":true' + (b"," if not rest.startswith(b"}") else b"") + rest
