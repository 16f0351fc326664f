"""The provider client's HTTP over real sockets (httpx underneath): kept-alive connections the
server closes, broken framing, timeouts, TLS with a CA trustme made, a real proxy (Debian's
tinyproxy), NO_PROXY and loopback, a refusal sent before the request was read, and the OTLP
poster on the same rules.

Nothing is mocked: every server here is a real socket server in a thread (tests/http_servers.py)
or a real program. The environment (proxies, SSL_CERT_FILE) is set the way a person sets it.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from scripts.fake_model import FakeModel
from seri.io.provider.provider import ProviderClient
from seri.io.provider.provider_stream import AFTER_END_SECONDS
from seri.pure.provider.provider_failure import ProviderFailure
from seri.pure.provider.stream_assembly import StreamResult
from seri.pure.provider.wire import build_request
from seri.pure.session.records import user
from tests.conftest import SERI, seri_env
from tests.http_servers import (
    RawServer,
    drip,
    hang_up,
    json_answer,
    outward_address,
    send,
    tinyproxy,
    tls_relay,
)

KEY = "sk-or-v1-connection0123456789SECRET"
MODELS = json_answer(b'{"data": [{"id": "fake/model", "context_length": 4096}]}')
PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
)


@pytest.fixture(autouse=True)
def no_proxies_but_the_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the machine sets, each test starts from no proxy and the default CAs."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


class Delays:
    def __init__(self) -> None:
        self.seen: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.seen.append(seconds)


def provider(url: str, delays: Delays | None = None, **options: Any) -> ProviderClient:
    settings: dict[str, Any] = {
        "sleep": (delays or Delays()).sleep,
        "jitter": lambda: 0.5,
        "server_is_local": False,
    }
    settings.update(options)
    return ProviderClient(url, KEY, **settings)


def chat_body() -> dict[str, Any]:
    return build_request("fake/model", (user("hi"),), (), stream=True)


def sse_answer(text: str) -> bytes:
    chunk = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
    end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    return f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode()


def chunked(body: bytes, size: int = 5) -> bytes:
    pieces = [body[i : i + size] for i in range(0, len(body), size)]
    return b"".join(b"%X\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
)


def streamed(text: str) -> bytes:
    return SSE_HEAD + chunked(sse_answer(text), size=64)


def said(outcome: StreamResult | ProviderFailure) -> str:
    assert isinstance(outcome, StreamResult), outcome
    assert outcome.complete, outcome.failure
    return outcome.message.text


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    with FakeModel() as server:
        yield server


@pytest.fixture
def servers() -> Iterator[list[RawServer]]:
    made: list[RawServer] = []
    yield made
    for server in made:
        server.close()


def serve(servers: list[RawServer], *answers: Any, **options: Any) -> RawServer:
    server = RawServer(list(answers), **options)
    servers.append(server)
    return server


# --- kept-alive connections ----------------------------------------------------------------


def test_one_connection_carries_the_calls_of_a_run(servers: list[RawServer]) -> None:
    """The window lookup and the turns of a run, each from a ProviderClient of its own, go
    over one connection: the process's httpx client keeps it."""
    server = serve(servers, send(MODELS), send(streamed("one")), send(streamed("two")))
    with provider(server.url()) as lookup:
        assert lookup.context_window("fake/model") == 4096
    with provider(server.url()) as client:
        assert said(client.stream_chat(chat_body())) == "one"
        assert said(client.stream_chat(chat_body())) == "two"
    assert (server.connections, len(server.requests)) == (1, 3)


def test_the_stream_is_read_to_its_end_after_done_and_its_connection_kept(
    servers: list[RawServer],
) -> None:
    """The chunked body's end comes a moment after [DONE]: it is read (as openai-python
    does), so the next call goes over the same connection."""

    def stream(text: str) -> Any:
        def act(conn: socket.socket, _request: bytes) -> bool:
            body = sse_answer(text)
            conn.sendall(SSE_HEAD + b"%X\r\n%s\r\n" % (len(body), body))
            time.sleep(0.1)
            conn.sendall(b"0\r\n\r\n")
            return True

        return act

    server = serve(servers, stream("one"), stream("two"))
    with provider(server.url()) as client:
        for text in ("one", "two"):
            assert said(client.stream_chat(chat_body())) == text
            time.sleep(0.2)  # the tools run
    assert (len(server.requests), server.connections) == (2, 1)


def test_a_body_held_open_after_done_costs_the_connection_not_the_turn(
    servers: list[RawServer],
) -> None:
    """[DONE], then the chunked end never comes: the answer is complete within about a
    second (not the read timeout's minute), and the next call goes over a new connection."""

    def held_open(conn: socket.socket, _request: bytes) -> bool:
        body = sse_answer("held")
        conn.sendall(SSE_HEAD + b"%X\r\n%s\r\n" % (len(body), body))
        conn.settimeout(20)
        with contextlib.suppress(OSError):
            conn.recv(1)  # until seri hangs up
        return False

    server = serve(servers, held_open, send(streamed("next")))
    with provider(server.url(), idle_timeout=60.0) as client:
        started = time.monotonic()
        assert said(client.stream_chat(chat_body())) == "held"
        assert time.monotonic() - started < AFTER_END_SECONDS + 2
        assert said(client.stream_chat(chat_body())) == "next"
    assert (len(server.requests), server.connections) == (2, 2)


def _close_after(answer: bytes) -> Any:
    """Answer as if keeping the connection, then close it a moment later (an idle timeout)."""

    def act(conn: socket.socket, _request: bytes) -> bool:
        conn.sendall(answer)
        time.sleep(0.05)
        return False

    return act


def test_a_kept_connection_the_server_closed_is_replaced_and_the_call_sent_once(
    servers: list[RawServer],
) -> None:
    server = serve(servers, _close_after(streamed("one")), send(streamed("two")))
    delays = Delays()
    with provider(server.url(), delays) as client:
        assert said(client.stream_chat(chat_body())) == "one"
        time.sleep(0.3)  # the server has closed its end by now
        assert said(client.stream_chat(chat_body())) == "two"
    assert len(server.requests) == 2  # the second call reached the server once
    assert server.connections == 2
    assert delays.seen == []  # noticed before sending, not retried


def test_a_request_the_server_hung_up_on_unanswered_is_sent_again(
    servers: list[RawServer],
) -> None:
    """The server reads the second request and hangs up without a byte of answer (its idle
    close crossed the request): nothing of the answer arrived, so the retry loop sends it
    again, once."""
    server = serve(servers, send(streamed("one")), hang_up(), send(streamed("two")))
    delays = Delays()
    with provider(server.url(), delays) as client:
        assert said(client.stream_chat(chat_body())) == "one"
        assert said(client.stream_chat(chat_body())) == "two"
    assert len(server.requests) == 3 and server.connections == 2
    assert len(delays.seen) == 1


def test_an_answer_that_started_is_never_sent_again(servers: list[RawServer]) -> None:
    """A stream cut after its first event: kept as far as it came, flagged, not resent."""
    body = sse_answer("partial")
    whole = chunked(body, size=len(body) // 2 + 1)
    server = serve(servers, send(SSE_HEAD + whole[: whole.index(b"[DONE]")], keep=False))
    with provider(server.url()) as client:
        result = client.stream_chat(chat_body())
    assert isinstance(result, StreamResult)
    assert not result.complete and result.message.text == "partial"
    assert result.failure is not None and result.failure.kind == "interrupted"
    assert len(server.requests) == 1


def test_a_connection_closed_after_the_head_is_retried_as_nothing_arrived(
    servers: list[RawServer],
) -> None:
    """200 and the stream's head, then the close: nothing of the answer arrived, so it is a
    connection failure, sent again."""
    server = serve(servers, send(SSE_HEAD, keep=False), send(streamed("second")))
    delays = Delays()
    with provider(server.url(), delays) as client:
        assert said(client.stream_chat(chat_body())) == "second"
    assert len(server.requests) == 2 and len(delays.seen) == 1


# --- framing the server gets wrong -----------------------------------------------------------


def test_a_huge_response_head_is_a_failure_not_a_crash(servers: list[RawServer]) -> None:
    """A 200 whose head carries 120 KB of header and no body: said as a failure, not sent
    again (h11 bounds what it buffers of a head)."""
    huge = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 120_000 + b"\r\n\r\n"
    server = serve(servers, send(huge, keep=False))
    with provider(server.url(), max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
    assert isinstance(failure, ProviderFailure)
    assert failure.kind == "malformed" and "neither SSE nor JSON" in failure.message
    assert len(server.requests) == 1


def test_a_bad_chunk_size_is_an_error_not_a_hang(servers: list[RawServer]) -> None:
    server = serve(servers, send(SSE_HEAD + b"zz\r\nhello\r\n", keep=False))
    started = time.monotonic()
    with provider(server.url(), max_attempts=1, idle_timeout=5) as client:
        failure = client.stream_chat(chat_body())
    assert time.monotonic() - started < 2
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"


def test_a_slow_drip_trips_the_watchdog(servers: list[RawServer]) -> None:
    """A keep-alive comment a byte at a time: every read gets a byte within httpx's read
    timeout, and the content watchdog ends it."""
    comments = b": OPENROUTER PROCESSING\n\n" * 20
    server = serve(servers, drip(SSE_HEAD + chunked(comments, size=1), 0.01))
    started = time.monotonic()
    with provider(server.url(), idle_timeout=0.5) as client:
        result = client.stream_chat(chat_body())
    assert time.monotonic() - started < 3
    assert isinstance(result, StreamResult)
    assert result.failure is not None and result.failure.kind == "stalled"


def test_silence_before_the_head_is_a_timeout_retried(servers: list[RawServer]) -> None:
    def silent(_conn: socket.socket, _request: bytes) -> bool:
        time.sleep(1.0)
        return False

    server = serve(servers, silent)
    started = time.monotonic()
    with provider(server.url(), max_attempts=2, idle_timeout=0.3) as client:
        failure = client.stream_chat(chat_body())
    assert time.monotonic() - started < 2
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert "no answer in time (ReadTimeout)" in failure.message
    assert len(server.requests) == 2


def test_an_answer_sent_before_the_request_was_read_is_heard() -> None:
    """A server that refuses a body too large at once and closes, while seri still sends:
    the refusal is what seri reports, not a broken pipe, and it is not sent again."""
    refusal = b'{"error": {"code": 413, "message": "Payload too large"}}'
    head = (
        b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(refusal)
    )
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[int] = []

    def refuse() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(1)
            conn.recv(1024)
            conn.sendall(head + refusal)
            conn.shutdown(socket.SHUT_WR)
            time.sleep(0.5)  # unread bytes at close would reset the connection before it is read
            conn.close()

    threading.Thread(target=refuse, daemon=True).start()
    huge = b'{"pad": "' + b"x" * 32_000_000 + b'"}'
    try:
        with provider(f"http://127.0.0.1:{listener.getsockname()[1]}/v1") as client:
            failure = client.stream_chat(huge)
    finally:
        listener.close()
    assert isinstance(failure, ProviderFailure), failure
    assert failure.status == 413 and "Payload too large" in failure.message + failure.detail
    assert accepted == [1]


# --- TLS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def _server_context(ca: trustme.CA, *names: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*(names or ("localhost", "127.0.0.1"))).configure_cert(context)
    return context


def test_https_with_the_ca_in_ssl_cert_file(
    authority: trustme.CA,
    fake_model: FakeModel,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    relay = tls_relay(_server_context(authority), fake_model.port)
    fake_model.add_steps({"text": "over tls"}, {"text": "again"})
    try:
        with provider(f"https://localhost:{relay.port}/v1") as client:
            for text in ("over tls", "again"):
                assert said(client.stream_chat(chat_body())) == text
            assert client.context_window("fake/model") is not None
    finally:
        relay.close()
    assert fake_model.request_headers[0]["authorization"] == f"Bearer {KEY}"


def test_https_with_the_wrong_ca_fails_with_advice(
    authority: trustme.CA, fake_model: FakeModel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    relay = tls_relay(_server_context(authority), fake_model.port)
    try:
        with provider(f"https://localhost:{relay.port}/v1", max_attempts=1) as client:
            failure = client.stream_chat(chat_body())
    finally:
        relay.close()
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert "CERTIFICATE_VERIFY_FAILED" in failure.message
    assert "point SSL_CERT_FILE at its CA bundle" in failure.message
    assert fake_model.requests == []


def test_an_unreadable_ca_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "missing.pem"
    monkeypatch.setenv("SSL_CERT_FILE", str(missing))
    with provider("https://localhost:9/v1", max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
        assert client.context_window("fake/model") is None
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert f"{missing} (SSL_CERT_FILE) cannot be loaded" in failure.message


# --- a real proxy ---------------------------------------------------------------------------


def test_a_real_proxy_carries_https_by_connect_and_http_in_absolute_form(
    authority: trustme.CA,
    tmp_path: Path,
    servers: list[RawServer],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = outward_address()
    plain = serve(servers, send(streamed("plain")), host=host)
    secure = serve(
        servers, send(streamed("secure")), host=host, tls=_server_context(authority, host)
    )
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    with tinyproxy(tmp_path, user="seri", password="s3cr3t") as (port, log):
        # Percent-encoded in the URL, decoded for Proxy-Authorization.
        proxy = f"http://seri:s%33cr%33t@127.0.0.1:{port}"
        monkeypatch.setenv("HTTPS_PROXY", proxy)
        monkeypatch.setenv("http_proxy", proxy)
        monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
        for server, text in ((secure, "secure"), (plain, "plain")):
            with provider(server.url(), max_attempts=1) as client:
                assert said(client.stream_chat(chat_body())) == text
        carried = log.read_text()
    assert f"CONNECT {host}:{secure.port} HTTP/1.1" in carried
    assert f"POST http://{host}:{plain.port}/v1/chat/completions HTTP/1.1" in carried
    # tinyproxy says who carried a plain request; a tunnelled one it cannot see into.
    assert b"(tinyproxy/" in plain.requests[0].lower()
    assert b"proxy-authorization" not in plain.requests[0].lower()
    assert f"Bearer {KEY}".encode() in secure.requests[0]


def test_the_proxys_refusal_is_said_without_its_password(
    tmp_path: Path, servers: list[RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    host = outward_address()
    server = serve(servers, send(streamed("never")), host=host)
    with tinyproxy(tmp_path, user="seri", password="right") as (port, _log):
        monkeypatch.setenv("HTTPS_PROXY", f"http://seri:wrong-SECRET@127.0.0.1:{port}")
        with provider(server.url(scheme="https"), max_attempts=1) as client:
            failure = client.stream_chat(chat_body())
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    # tinyproxy answers 401 where RFC 9110 says 407; either is a refusal.
    assert "407" in failure.message or "401" in failure.message, failure.message
    assert "SECRET" not in failure.message + failure.detail
    assert server.requests == []


def test_no_proxy_and_loopback_go_direct(
    servers: list[RawServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The proxy named is a port nothing listens on: only a direct request can succeed."""
    host = outward_address()
    remote = serve(servers, send(streamed("remote")), host=host)
    local = serve(servers, send(streamed("local")))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    monkeypatch.setenv("HTTP_PROXY", dead)
    for no_proxy in (host, "*", f"example.com, {host}"):
        monkeypatch.setenv("NO_PROXY", no_proxy)
        with provider(remote.url(), max_attempts=1) as client:
            assert said(client.stream_chat(chat_body())) == "remote"
    monkeypatch.delenv("NO_PROXY")
    for loopback in ("127.0.0.1", "localhost"):
        with provider(local.url().replace("127.0.0.1", loopback), max_attempts=1) as client:
            assert said(client.stream_chat(chat_body())) == "local"
    with provider(remote.url(), max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert len(remote.requests) == 3


def test_a_socks_proxy_without_httpxs_extra_is_a_clear_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALL_PROXY", "socks5://user:SECRET@127.0.0.1:1080")
    with provider("https://example.com/v1", max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
        assert client.model_ids() is None
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert "the proxy in the environment cannot be used" in failure.message
    assert "socksio" in failure.message and "SECRET" not in failure.message


@pytest.mark.parametrize("url", ["ftp://example.com/v1", "localhost:8080/v1"])
def test_a_url_seri_cannot_ask_is_a_connection_failure(url: str) -> None:
    with provider(url, max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert failure.message.startswith("could not reach the provider: Request URL ")


def test_the_installed_seri_talks_https_with_the_ca_in_ssl_cert_file(
    authority: trustme.CA, fake_model: FakeModel, tmp_path: Path
) -> None:
    """The whole way: `seri chat -p` against the fake behind TLS, trusting trustme's CA
    through SSL_CERT_FILE, with a dead proxy named that a loopback server must not use."""
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / "config.json").write_text('{"context_window": 200000}')
    relay = tls_relay(_server_context(authority), fake_model.port)
    fake_model.add_steps({"text": "over tls"})
    extra = {
        "SERI_BASE_URL": f"https://localhost:{relay.port}/v1",
        "OPENROUTER_API_KEY": KEY,
        "SSL_CERT_FILE": str(bundle),
        "HTTPS_PROXY": "http://127.0.0.1:9",
    }
    try:
        done = subprocess.run(
            [SERI, "chat", "-p", "hi"],
            cwd=project,
            env=seri_env(home, extra),
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        relay.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "over tls\n"
    assert fake_model.request_headers[0]["authorization"] == f"Bearer {KEY}"


# --- the OTLP poster ------------------------------------------------------------------------


def test_the_otlp_poster_sends_url_credentials_and_reads_a_refusal(
    servers: list[RawServer],
) -> None:
    """The endpoint's user:password@ as Basic authorization, the settings' headers over
    seri's own, the refusal and its Retry-After read."""
    from seri.io.trajectories.otlp_sender import OtlpPoster
    from seri.pure.trajectories.otlp_settings import Target
    from seri.pure.trajectories.redaction import Redactor

    busy = b"HTTP/1.1 503 Busy\r\nRetry-After: 2\r\nContent-Length: 4\r\n\r\nbusy"
    server = serve(servers, send(busy))
    url = f"http://user:p%40ss@127.0.0.1:{server.port}/v1/traces"
    target = Target(url=url, protocol="http/json", headers=(("user-agent", "mine"),))
    poster = OtlpPoster(target, Redactor())
    delivery = poster.post(b"{}")
    poster.close()
    assert (delivery.ok, delivery.retry, delivery.why, delivery.retry_after) == (
        False,
        True,
        "HTTP 503: busy",
        2.0,
    )
    (request,) = server.requests
    head = request.lower()
    assert b"\r\nauthorization: basic dxnlcjpwqhnz\r\n" in head  # user:p@ss
    assert b"\r\nuser-agent: mine\r\n" in head and b"otlp/http" not in head
    assert request.startswith(b"POST /v1/traces HTTP/1.1\r\n")


def test_an_authorization_header_in_the_settings_wins_over_url_credentials(
    servers: list[RawServer],
) -> None:
    from seri.io.trajectories.otlp_sender import OtlpPoster
    from seri.pure.trajectories.otlp_settings import Target
    from seri.pure.trajectories.redaction import Redactor

    server = serve(servers, send(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
    url = f"http://user:pass@127.0.0.1:{server.port}/v1/traces"
    target = Target(url=url, protocol="http/json", headers=(("Authorization", "Bearer tok"),))
    delivery = OtlpPoster(target, Redactor()).post(b"{}")
    assert delivery.ok
    authorizations = [
        line for line in server.requests[0].lower().split(b"\r\n") if b"authorization" in line
    ]
    assert authorizations == [b"authorization: bearer tok"]


def test_an_endpoint_httpx_cannot_read_fails_each_post_without_stopping_the_run() -> None:
    """The settings only check the scheme; a port httpx cannot read is said by the post, as
    any other failure to deliver, and neither the making of the poster nor the run raises."""
    from seri.io.trajectories.otlp_sender import OtlpPoster
    from seri.pure.trajectories.otlp_settings import Target
    from seri.pure.trajectories.redaction import Redactor

    target = Target(url="http://user:SECRET@127.0.0.1:port/v1/traces", protocol="http/json")
    delivery = OtlpPoster(target, Redactor()).post(b"{}")
    assert not delivery.ok and delivery.retry
    assert "port" in delivery.why.lower() and "SECRET" not in delivery.why


# --- secrets ---------------------------------------------------------------------------------


def test_no_key_or_password_reaches_httpxs_logs_or_a_failure(
    servers: list[RawServer], caplog: pytest.LogCaptureFixture
) -> None:
    """httpx and httpcore log every request at INFO and DEBUG when a program turns logging
    on: neither the API key nor an OTLP endpoint's password is in what they log, nor in the
    failures of a refused connection, a cut stream and a refused post."""
    from seri.io.trajectories.otlp_sender import OtlpPoster
    from seri.pure.trajectories.otlp_settings import Target
    from seri.pure.trajectories.redaction import Redactor

    cut = SSE_HEAD + chunked(sse_answer("partial"))[:40]
    server = serve(servers, send(streamed("ok")), send(cut, keep=False))
    server.answers.append(send(b"HTTP/1.1 401 No\r\nContent-Length: 2\r\n\r\nno"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        nothing = probe.getsockname()[1]
    failures: list[str] = []
    with caplog.at_level("DEBUG"):
        with provider(server.url()) as client:
            assert said(client.stream_chat(chat_body())) == "ok"
            cut_result = client.stream_chat(chat_body())  # cut before an event, then a 401
            failures.append(repr(cut_result))
        with provider(f"http://127.0.0.1:{nothing}/v1", max_attempts=1) as client:
            failures.append(repr(client.stream_chat(chat_body())))
        for port in (server.port, nothing):
            url = f"http://user:PASSWORD@127.0.0.1:{port}/v1/traces"
            target = Target(url=url, protocol="http/json")
            failures.append(repr(OtlpPoster(target, Redactor()).post(b"{}")))
    logged = caplog.text
    assert "HTTP Request: POST http://127.0.0.1" in logged  # httpx's log was captured
    for text in (logged, *failures):
        assert KEY not in text and "PASSWORD" not in text
