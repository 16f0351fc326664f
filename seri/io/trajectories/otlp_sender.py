"""Posting OTLP/HTTP requests: once (``OtlpPoster``), or from a thread of their own while a
run goes on (``BackgroundSender``).

A run must never wait for telemetry. The background sender takes spans into a bounded
queue (what does not fit is dropped), posts them in batches from its own thread, and after
a failure stops trying for a while instead of queueing against a dead collector. Closing
waits a short, fixed time for the last batch; a collector that does not answer by then
loses it. Whatever goes wrong is said once, in one line, never with a header's value
(headers often carry an API key) and never with the URL's user, password or query.

The posts go through httpx, the process's client for the collector
(``seri.io.provider.http_client``, the provider's rules): proxies and CAs from the environment, no
redirects, a kept connection. A ``user:password@`` in the endpoint's URL is sent as Basic
authorization, and the URL goes to httpx without it, so no log or message of httpx's can show it.
httpx loads when a poster is made, so nothing pays for it unless export is on.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from seri import __version__
from seri.pure.trajectories.genai_metrics import (
    MetricKey,
    MetricObservation,
    MetricSum,
    accumulate,
    histograms_of,
)
from seri.pure.trajectories.otlp_model import Producer, Span
from seri.pure.trajectories.otlp_request import CONTENT_TYPES, metrics_body, refused, traces_body
from seri.pure.trajectories.redaction import Redactor

if TYPE_CHECKING:
    import httpx

    from seri.pure.trajectories.otlp_settings import OtlpSettings, Target

# A connection that is not made in this time will not be made: a collector that drops
# packets would otherwise hold a post for the whole timeout.
CONNECT_SECONDS = 2.0
# Answers that mean "try again later" (OTLP/HTTP's retryable statuses).
RETRYABLE = frozenset({408, 429, 502, 503, 504})
BATCH_SPANS = 512
MAX_QUEUED_SPANS = 8192
MAX_QUEUED_OBSERVATIONS = 16384
FLUSH_SECONDS = 1.0
METRICS_SECONDS = 60.0
# After a failed post, batches are dropped (not queued) for this long before trying again.
COOLDOWN_SECONDS = 30.0
# What close() waits, at most, for the last batches.
CLOSE_SECONDS = 2.0
# A collector's answer is a partial-success count and a message: more is not read.
ANSWER_BYTES = 1024 * 1024


@attrs.frozen
class Delivery:
    """How one post went."""

    ok: bool
    retry: bool = False  # worth trying again later
    why: str = ""
    refused: int = 0  # items the receiver said it dropped
    refused_why: str = ""
    retry_after: float | None = None


class OtlpPoster:
    """Posts request bodies to one signal's endpoint."""

    def __init__(self, target: Target, redactor: Redactor) -> None:
        import httpx

        self.target = target
        self.redactor = redactor
        try:
            url = httpx.URL(target.url)
        except httpx.InvalidURL as exc:
            # Said by every post (as before httpx): export goes on failing, the run does not.
            self._unusable: str | None = self.redactor.text(f"the endpoint's URL: {exc}")
            url = httpx.URL()
        else:
            self._unusable = None
        self._url = url.copy_with(username=None, password=None)
        defaults = {
            "Content-Type": CONTENT_TYPES[target.protocol],
            "User-Agent": f"seri/{__version__} (OTLP/HTTP)",
        }
        if target.gzip:
            defaults["Content-Encoding"] = "gzip"
        # The settings' headers win over seri's own of the same name, the URL's credentials
        # included.
        own = {name.lower() for name, _ in target.headers}
        self._headers = [
            *((name, value) for name, value in defaults.items() if name.lower() not in own),
            *target.headers,
        ]
        credentials = url.username or url.password
        self._auth = (
            httpx.BasicAuth(url.username, url.password)
            if credentials and "authorization" not in own
            else None
        )
        self._timeout = httpx.Timeout(target.timeout, connect=min(target.timeout, CONNECT_SECONDS))

    def post(self, body: bytes) -> Delivery:
        import httpx

        from seri.io.provider.http_client import shared_client

        if self._unusable is not None:
            return Delivery(False, retry=True, why=self._unusable)
        if self.target.gzip:
            body = gzip.compress(body, compresslevel=5)
        try:
            client = shared_client(str(self._url))
            with client.stream(
                "POST",
                self._url,
                content=body,
                headers=self._headers,
                auth=self._auth,
                timeout=self._timeout,
            ) as answer:
                return self._judged(answer, _read_at_most(answer, ANSWER_BYTES))
        except httpx.TimeoutException:
            return Delivery(False, retry=True, why=f"no answer within {self.target.timeout:g} s")
        except (httpx.TransportError, httpx.DecodingError, OSError, ImportError, ValueError) as exc:
            # OSError: CAs that cannot be read; ImportError: a SOCKS proxy without httpx's
            # extra; ValueError: a header in the settings that cannot be sent (named, never
            # its value).
            return Delivery(False, retry=True, why=self._words(exc))

    def _judged(self, answer: httpx.Response, content: bytes) -> Delivery:
        status = answer.status_code
        if 200 <= status < 300:
            kind = answer.headers.get("content-type", "")
            count, message = refused(self.target.protocol, kind, content)
            return Delivery(True, refused=count, refused_why=self.redactor.text(message[:300]))
        text = content.decode("utf-8", errors="replace").strip().replace("\n", " ")[:200]
        why = f"HTTP {status}" + (f": {self.redactor.text(text)}" if text else "")
        if status in (404, 405) and self.target.signal == "metrics":
            why += " (a receiver of traces only? OTEL_METRICS_EXPORTER=none sends no metrics)"
        return Delivery(
            False,
            retry=status in RETRYABLE,
            why=why,
            retry_after=_seconds(answer.headers.get("retry-after") or None),
        )

    def _words(self, exc: Exception) -> str:
        cause: BaseException = exc
        while cause.__cause__ is not None or cause.__context__ is not None:
            cause = cause.__cause__ or cause.__context__ or cause
        reason = getattr(cause, "strerror", None) or str(cause) or type(cause).__name__
        return self.redactor.text(str(reason))

    def close(self) -> None:
        """Nothing to release: the connection stays with the process's client."""


def _read_at_most(answer: httpx.Response, limit: int) -> bytes:
    """The answer's first ``limit`` bytes and a little more: what arrives past them is not read."""
    content = bytearray()
    for piece in answer.iter_bytes():
        content += piece
        if len(content) >= limit:
            break
    return bytes(content)


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


class BackgroundSender:
    """Spans and metric observations handed over by a run, posted from a daemon thread."""

    def __init__(
        self,
        settings: OtlpSettings,
        producer: Producer,
        redactor: Redactor,
        warn: Callable[[str], None],
        *,
        clock: Callable[[], float] = time.time,
        max_spans: int = MAX_QUEUED_SPANS,
        flush_seconds: float = FLUSH_SECONDS,
        metrics_seconds: float = METRICS_SECONDS,
    ) -> None:
        self.producer = producer
        self._warn = warn
        self._clock = clock
        self._max_spans = max_spans
        self._flush_seconds = flush_seconds
        self._metrics_seconds = metrics_seconds
        self._posters: dict[str, OtlpPoster] = {}
        targets = {"traces": settings.traces, "metrics": settings.metrics}
        self._targets: Mapping[str, Target | None] = targets
        self._redactor = redactor
        self._lock = threading.Condition()
        self._spans: deque[Span] = deque()
        self._observations: list[MetricObservation] = []
        self._sums: dict[MetricKey, MetricSum] = {}
        self._window_start = clock()
        self._closing = False
        self._warned = False
        self._dropped = 0
        self._in_flight = 0  # spans of the batch being posted
        self._down_until = 0.0
        self._thread = threading.Thread(target=self._loop, name="seri-otlp", daemon=True)
        self._thread.start()

    # -- the run's side: never blocks on the network ---------------------------------------

    def add(self, spans: Iterable[Span], observations: Iterable[MetricObservation]) -> None:
        with self._lock:
            if self._targets["traces"] is not None:
                for span in spans:
                    if len(self._spans) >= self._max_spans:
                        self._dropped += 1
                        self._say_once("the telemetry queue is full (the collector is slow)")
                        continue
                    self._spans.append(span)
            if self._targets["metrics"] is not None:
                room = MAX_QUEUED_OBSERVATIONS - len(self._observations)
                self._observations.extend(list(observations)[: max(room, 0)])
            if len(self._spans) >= BATCH_SPANS:
                self._lock.notify()

    def close(self, timeout: float = CLOSE_SECONDS) -> None:
        """Send what is queued, waiting ``timeout`` seconds at most."""
        with self._lock:
            self._closing = True
            self._lock.notify()
        self._thread.join(timeout)
        if self._thread.is_alive():
            with self._lock:
                shown = next(
                    (target.shown for target in self._targets.values() if target is not None),
                    "the collector",
                )
                self._say_once(
                    f"{shown} did not take the last telemetry within {timeout:g} s; it is dropped"
                )
                self._dropped += len(self._spans) + self._in_flight
                self._spans.clear()

    @property
    def dropped(self) -> int:
        with self._lock:
            return self._dropped

    # -- the thread ------------------------------------------------------------------------

    def _loop(self) -> None:
        last_metrics = time.monotonic()
        while True:
            with self._lock:
                if not self._closing and len(self._spans) < BATCH_SPANS:
                    self._lock.wait(self._flush_seconds)
                closing = self._closing
                batch = [self._spans.popleft() for _ in range(min(BATCH_SPANS, len(self._spans)))]
                observations, self._observations = self._observations, []
                self._in_flight = len(batch)
            self._sums = accumulate(self._sums, observations)
            if batch:
                self._post("traces", batch, len(batch))
                with self._lock:
                    self._in_flight = 0
            metrics_due = time.monotonic() - last_metrics >= self._metrics_seconds
            if self._sums and (metrics_due or (closing and not self._spans)):
                now = self._clock()
                found = histograms_of(self._sums, _ns(self._window_start), _ns(now))
                self._sums, self._window_start = {}, now
                last_metrics = time.monotonic()
                self._post("metrics", found, 0)
            with self._lock:
                if self._closing and not self._spans and not self._observations:
                    break
        for poster in self._posters.values():
            poster.close()

    def _post(self, signal: str, items: Any, count: int) -> None:
        target = self._targets[signal]
        if target is None:
            return
        if time.monotonic() < self._down_until:
            with self._lock:
                self._dropped += count
            return
        if signal not in self._posters:
            self._posters[signal] = OtlpPoster(target, self._redactor)
        if signal == "traces":
            body = traces_body(target.protocol, self.producer, items)
        else:
            body = metrics_body(target.protocol, self.producer, items)
        delivery = self._posters[signal].post(body)
        if delivery.ok:
            if delivery.refused:
                with self._lock:
                    self._say_once(
                        f"{target.shown} refused {delivery.refused} items: {delivery.refused_why}"
                    )
            return
        pause = COOLDOWN_SECONDS if delivery.retry else float("inf")
        self._down_until = time.monotonic() + max(pause, delivery.retry_after or 0.0)
        with self._lock:
            self._dropped += count
            self._say_once(
                f"cannot send telemetry to {target.shown} ({delivery.why}); it is dropped "
                "while the collector is unreachable"
            )

    def _say_once(self, message: str) -> None:
        """The one warning of the run (the caller holds the lock)."""
        if not self._warned:
            self._warned = True
            self._warn(message)


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)
