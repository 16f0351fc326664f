"""The HTTP client for an OpenAI-compatible chat-completions API (OpenRouter by default).

Thin on purpose: it sends the body ``seri.pure.wire`` built over httpx (the process's client,
``seri.io.http_client``: keep-alive, proxies and CAs from the environment), feeds the bytes to
the pure SSE parser (``seri.pure.sse``) and assembler (``seri.pure.stream_assembly``), asks
``seri.pure.provider_errors`` what every failure means and ``seri.pure.retry_plan`` whether to
retry. What it owns is the part only I/O can do:

* the one retry loop (nothing retries underneath it), and only before any of the answer has
  arrived: a request whose stream already started is never sent twice, since the caller may
  have shown or acted on part of it;
* a watchdog over the signs of life (``seri.pure.answer_wait``): an event or a keep-alive
  comment must come within the silence limit, and the attempt must end by its deadline (a
  server dripping bytes resets httpx's read timeout forever); a local server gets the time its
  prompt may take to read (the request's read timeout), and llama.cpp is asked for its
  progress;
* keeping the API key out of every message, exception, log and repr: it goes in one request
  header, and whatever httpx says is scrubbed of it.

httpx costs ~55 ms to import, so nothing imports this module before it is needed, and
``seri chat -p`` starts importing it in a thread while it opens the session
(``seri.io.http_client.load_in_background``). What reads an answer (the SSE parser, the
assembler, the error classifier and the retry planner) is imported once there is an answer to
read: the request goes out first, and the server takes longer to answer than they take to load
(``scripts/bench/first_byte.py`` measures the first request byte beside other agents).
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import httpx

from seri.io.http_client import shared_client
from seri.pure import json_text
from seri.pure.answer_wait import (
    AnswerWait,
    is_local_server,
    prompt_progress,
    prompt_seconds,
    speaks_llama_cpp,
)
from seri.pure.bounded_input import (
    PROVIDER_ANSWER,
    PROVIDER_STREAM,
    BoundedInputError,
    message_too_big,
)
from seri.pure.provider_failure import ProviderFailure

if TYPE_CHECKING:
    from seri.pure.sse import SSEDone, SSEEvent
    from seri.pure.stream_assembly import StreamAssembler, StreamResult

# attempt number (from 1), HTTP status (None when there was no answer), delay in s, reason.
RetryCallback = Callable[[int, int | None, float, str], None]

_ERROR_BODY_LIMIT = 64 * 1024
# What is read of a stream after its end ([DONE]) so that its connection can be kept, as
# openai-python does; a server that sends more than this after the end loses the connection.
_AFTER_END_LIMIT = 64 * 1024
# ... and how long it is waited for: a server that holds the body open after [DONE] costs the
# connection, not the turn (the request's read timeout would let it hold the answer for minutes).
AFTER_END_SECONDS = 1.0
WRITE_SECONDS = 60.0
_JSON_HEADERS = {"Content-Type": "application/json"}


def _check_key(api_key: str) -> None:
    # A key that cannot go in a header would make the request fail with an error about it.
    if not api_key.isascii() or any(ch.isspace() or not ch.isprintable() for ch in api_key):
        raise ValueError("the API key contains characters that cannot be sent in an HTTP header")


class _Secret:
    """A string that shows as ``[redacted]`` in any repr, traceback locals or debugger."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "[redacted]"

    __str__ = __repr__


class ProviderClient:
    """Talks to ``{base_url}/chat/completions`` and ``{base_url}/models``.

    ``sleep``, the clocks and ``jitter`` (a source of fractions in [0, 1)) are parameters so
    that tests can run the real loop over real HTTP without waiting. ``idle_timeout`` bounds the
    silence between signs of life (events and keep-alive comments), ``total_timeout`` one
    attempt as a whole; a local server (``server_is_local``, by default from the URL) may take
    longer by the time its prompt could take to read (``seri.pure.answer_wait``).
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
        _check_key(api_key)
        self._base_url = base_url.rstrip("/")
        self._api_key = _Secret(api_key)
        self.max_attempts = max_attempts
        self.retry_cap_seconds = retry_cap_seconds
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self.connect_timeout = connect_timeout
        self._local = is_local_server(base_url) if server_is_local is None else server_is_local
        # Set once a local server's answer shows it is llama.cpp: ask it for prompt progress.
        self._asks_progress = False
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock
        self._jitter = jitter if jitter is not None else _random_fraction
        self._on_retry = on_retry
        self._referer = referer
        self._title = title

    def __repr__(self) -> str:
        return f"ProviderClient(base_url={self._base_url!r}, api_key=[redacted])"

    def close(self) -> None:
        """Nothing to release: the connections belong to the process's client, which keeps
        them alive for the next ProviderClient of the run (``seri.io.http_client``)."""

    def __enter__(self) -> ProviderClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _url(self, path: str) -> str:
        return f"{self._base_url}/{path}"

    def _headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        # No key (a local server that wants none): no Authorization header at all.
        headers = {"User-Agent": "seri"}
        if self._api_key.value:
            headers["Authorization"] = f"Bearer {self._api_key.value}"
        if self._referer:
            headers["HTTP-Referer"] = self._referer
        if self._title:
            headers["X-Title"] = headers["X-OpenRouter-Title"] = self._title
        return {**headers, **(extra or {})}

    def _timeout(self, read: float) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout,
            read=read,
            write=WRITE_SECONDS,
            pool=self.connect_timeout,
        )

    def _scrub(self, text: str) -> str:
        from seri.pure.provider_error_body import redact

        return redact(text, (self._api_key.value,))

    def _said(self, exc: Exception) -> str:
        """What went wrong, in httpx's words (which name no header, URL or key; scrubbed of
        the key all the same), with advice for a certificate that does not verify."""
        said = self._scrub(str(exc)) or type(exc).__name__
        if "CERTIFICATE_VERIFY_FAILED" in said:
            said += "; if your network inspects TLS, point SSL_CERT_FILE at its CA bundle"
        return said

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
            if not isinstance(outcome, ProviderFailure):
                return outcome
            from seri.pure.retry_plan import plan_retry

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
        content = _encoded(body)
        if self._asks_progress:
            content = _asking_progress(content)
        wait = AnswerWait(
            self.idle_timeout,
            self.total_timeout,
            self._clock(),
            prompt=prompt_seconds(len(content)) if self._local else 0.0,
        )
        try:
            client = self._client()
            # httpx's read timeout is per network read and set per request: the first wait,
            # which for a local server includes the time its prompt may take (some answer
            # their headers only once it is read). After the first sign of life the watchdog
            # holds the shorter silence limit on every arrival; a local server that then goes
            # silent altogether is caught by this read timeout.
            with client.stream(
                "POST",
                self._url("chat/completions"),
                content=content,
                headers=self._headers(_JSON_HEADERS),
                timeout=self._timeout(wait.first_wait),
            ) as response:
                if response.status_code != 200:
                    refusal = self._refusal(response)
                    said = refusal.detail + refusal.message
                    if self._asks_progress and "return_progress" in said:
                        # Not llama.cpp after all (a proxy in front of a stricter server).
                        self._asks_progress = False
                        return self._attempt(body, on_text, on_reasoning)
                    return refusal
                if "text/event-stream" not in response.headers.get("content-type", ""):
                    return self._whole(response, on_text)
                return self._read_stream(response, wait, on_text, on_reasoning)
        except httpx.TimeoutException as exc:
            from seri.pure.provider_errors import connection_failure

            return connection_failure(f"no answer in time ({type(exc).__name__})")
        except (httpx.TransportError, httpx.InvalidURL, _NoClient) as exc:
            from seri.pure.provider_errors import connection_failure

            return connection_failure(self._said(exc))

    def _client(self) -> httpx.Client:
        """The process's client for this server; a CA file that cannot be read or a proxy
        httpx cannot use is said as a connection failure (``_NoClient``)."""
        try:
            return shared_client(self._base_url)
        except OSError as exc:
            raise _NoClient(_unreadable_cas(exc)) from None
        except (ImportError, ValueError) as exc:
            # A SOCKS proxy without httpx's extra, a proxy URL httpx cannot read (httpx
            # shows a URL's password as [secure]).
            raise _NoClient(f"the proxy in the environment cannot be used: {exc}") from None

    def _refusal(self, response: httpx.Response) -> ProviderFailure:
        from seri.pure.provider_errors import classify_http_error

        raw = _read_at_most(response.iter_bytes(), _ERROR_BODY_LIMIT)
        return classify_http_error(
            response.status_code,
            raw.decode("utf-8", errors="replace"),
            response.headers,
            now=self._wall_clock(),
            secrets=(self._api_key.value,),
        )

    def _whole(
        self, response: httpx.Response, on_text: Callable[[str], None] | None
    ) -> StreamResult | ProviderFailure:
        """A 200 with a JSON body: a non-streaming request, or a server that ignored ``stream``."""
        from seri.pure.provider_errors import malformed_response
        from seri.pure.stream_assembly import assemble_completion

        try:
            parsed = json_text.loads_lenient_numbers(_bounded_body(response))
        except BoundedInputError as exc:
            return malformed_response(f"a 200 answer with {exc.reason}")
        except ValueError:
            return malformed_response("a 200 answer whose body is neither SSE nor JSON")
        if not isinstance(parsed, Mapping):
            return malformed_response("a 200 answer whose JSON body is not an object")
        result = assemble_completion(parsed)
        if result.failure is not None and not _answered(result):
            # `{"error": {"code": 500, ...}}` with status 200: nothing was answered, so it is
            # retried (or refused) like the same status over HTTP.
            return result.failure
        if on_text is not None and result.message.text:
            on_text(result.message.text)
        return result

    def _read_stream(
        self,
        response: httpx.Response,
        wait: AnswerWait,
        on_text: Callable[[str], None] | None,
        on_reasoning: Callable[[str], None] | None,
    ) -> StreamResult | ProviderFailure:
        from seri.pure.provider_errors import (
            connection_failure,
            malformed_response,
            stream_interrupted,
            stream_overdue,
            stream_stalled,
        )
        from seri.pure.sse import SSEParser
        from seri.pure.stream_assembly import StreamAssembler

        parser = SSEParser(PROVIDER_STREAM)
        assembler = StreamAssembler()
        failure: ProviderFailure | None = None
        ended = False
        after_end = 0
        cut_off: threading.Timer | None = None
        try:
            for chunk in response.iter_bytes():
                if cut_off is not None:  # the stream has finished
                    # The rest of the body (the chunked end) is read so that the connection
                    # is kept for the next call; it arrives with [DONE] or just after.
                    after_end += len(chunk)
                    if after_end > _AFTER_END_LIMIT:
                        break
                    continue
                now = self._clock()
                comments = parser.comments
                events = parser.feed(chunk)
                _take_events(assembler, events, on_text, on_reasoning)
                if assembler.finished:
                    cut_off = _hang_up_after(response, AFTER_END_SECONDS)
                if events or parser.comments != comments:
                    wait.alive(now)
                    self._note_server(events, wait, now)
                # Checked on every arrival: bytes that never complete an event (a drip)
                # keep the read timeout from ever firing.
                if not assembler.finished and wait.silent_too_long(now):
                    failure = stream_stalled(wait.silence_limit())
                    break
                if not assembler.finished and wait.overdue(now):
                    failure = stream_overdue(wait.deadline)
                    break
            else:
                ended = not assembler.finished
        except httpx.TimeoutException:
            if not assembler.finished:
                failure = stream_stalled(wait.silence_limit())
        except BoundedInputError as exc:
            # Over a limit: the rest of the stream is not read (a line that never ends would
            # grow for as long as the provider kept sending it), and it is not asked again.
            failure = malformed_response(f"a stream with {exc.reason}")
        except (httpx.TransportError, httpx.DecodingError) as exc:
            if not assembler.finished:
                failure = stream_interrupted(self._said(exc))
        finally:
            if cut_off is not None:
                cut_off.cancel()
        if ended:
            _take_events(assembler, parser.finish(), on_text, on_reasoning)
        nothing_arrived = assembler.data_events == 0 and not assembler.finished
        if nothing_arrived and (failure is None or failure.kind == "interrupted"):
            # Nothing of the answer arrived, so sending the request again cannot repeat anything.
            return connection_failure("the connection closed before the answer started")
        result = assembler.result(failure)
        if assembler.failed and not assembler.delivered and result.failure is not None:
            # An error as the first event (the status was already 200): nothing was shown or
            # acted on, so it is retried like the same status over HTTP.
            return result.failure
        return result

    def _note_server(self, events: list[SSEEvent | SSEDone], wait: AnswerWait, now: float) -> None:
        """Progress moves the deadline; llama.cpp's own chunk says it can send progress."""
        from seri.pure.sse import SSEEvent

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
        from seri.pure.server_windows import (
            window_from_listing,
            window_from_ollama_show,
            window_from_props,
        )

        listing = self._get_json(self._url("models"))
        window = window_from_listing(listing, model)
        if window is None:
            window = window_from_props(self._get_json(self._server_url("props")))
        if window is None:
            window = window_from_ollama_show(
                self._post_json(self._server_url("api/show"), {"model": model})
            )
        return window

    def model_ids(self) -> tuple[str, ...] | None:
        """The models ``GET {base_url}/models`` lists; None when the server lists none."""
        from seri.pure.model_list import listed_model_ids

        return listed_model_ids(self._get_json(self._url("models")))

    def _server_url(self, path: str) -> str:
        """A path at the server's root: llama.cpp and Ollama serve /props and /api/show there,
        beside (not under) their OpenAI-compatible ``/v1``."""
        root = self._base_url.removesuffix("/v1")
        return f"{root}/{path}"

    def _get_json(self, url: str) -> Any:
        return self._json_answer("GET", url, None)

    def _post_json(self, url: str, body: Mapping[str, Any]) -> Any:
        return self._json_answer("POST", url, body)

    def _json_answer(self, method: str, url: str, body: Mapping[str, Any] | None) -> Any:
        """The JSON of a 200 answer; ``None`` for anything else, whatever went wrong."""
        content, extra = (None, None) if body is None else (_encoded(body), _JSON_HEADERS)
        try:
            with self._client().stream(
                method,
                url,
                content=content,
                headers=self._headers(extra),
                timeout=self._timeout(self.idle_timeout),
            ) as response:
                if response.status_code != 200:
                    return None
                return json_text.loads_lenient_numbers(_bounded_body(response))
        except (httpx.HTTPError, httpx.InvalidURL, _NoClient, ValueError):
            return None


class _NoClient(Exception):
    """No client could be made for the environment (its CAs, its proxy)."""


def _unreadable_cas(exc: OSError) -> str:
    import os

    for variable in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        if os.environ.get(variable):
            return (
                f"the CA certificates in {os.environ[variable]} ({variable}) cannot be loaded: "
                f"{exc.strerror or exc}"
            )
    return f"the CA certificates cannot be loaded: {exc.strerror or exc}"


def _random_fraction() -> float:
    """A retry's jitter. random is imported when a retry draws one: it loads hashlib's
    sha512 and more, which a start pays for otherwise."""
    import random

    return random.random()  # noqa: S311 (retry jitter, not a secret)


def _hang_up_after(response: httpx.Response, seconds: float) -> threading.Timer:
    """Shut the answer's connection down in ``seconds`` unless cancelled first: a read blocked
    on it then ends (the connection is dropped, not kept)."""

    def hang_up() -> None:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            # Already closed: nothing is waiting on it.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(seconds, hang_up)
    timer.daemon = True
    timer.start()
    return timer


def _read_at_most(pieces: Iterator[bytes], limit: int) -> bytes:
    """The body's first ``limit`` bytes and a little more: what arrives past them is not read."""
    body = bytearray()
    for piece in pieces:
        body += piece
        if len(body) >= limit:
            break
    return bytes(body)


def _bounded_body(response: httpx.Response) -> bytes:
    """A whole JSON answer, read no further than its limit (``BoundedInputError`` past it)."""
    body = _read_at_most(response.iter_bytes(), PROVIDER_ANSWER.max_message_bytes + 1)
    if len(body) > PROVIDER_ANSWER.max_message_bytes:
        raise message_too_big(PROVIDER_ANSWER)
    return body


def _encoded(body: Mapping[str, Any] | bytes) -> bytes:
    if isinstance(body, bytes):
        return body
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _asking_progress(body: bytes) -> bytes:
    """The body with llama.cpp's ``return_progress`` asked for, when it streams (the field is
    spliced in: the body may be the cached bytes the loop built)."""
    if b'"stream":true' not in body or not body.startswith(b"{") or b'"return_progress"' in body:
        return body
    rest = body[1:].lstrip()
    return b'{"return_progress":true' + (b"," if not rest.startswith(b"}") else b"") + rest


def _take_events(
    assembler: StreamAssembler,
    events: list[SSEEvent | SSEDone],
    on_text: Callable[[str], None] | None,
    on_reasoning: Callable[[str], None] | None,
) -> None:
    for event in events:
        delta = assembler.feed_event(event)
        if delta.reasoning and on_reasoning is not None:
            on_reasoning(delta.reasoning)
        if delta.text and on_text is not None:
            on_text(delta.text)


def _answered(result: StreamResult) -> bool:
    message = result.message
    return bool(message.text or message.reasoning or message.tool_calls)
