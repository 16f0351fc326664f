"""seri's HTTP/1.1 client over real sockets: kept-alive connections the server closes, broken
framing, timeouts, TLS with a CA trustme made, and a real proxy (Debian's tinyproxy).

Nothing is mocked: every server here is a real socket server in a thread (tests/http_servers.py)
or a real program.
"""

from __future__ import annotations

import json
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme

from scripts.fake_model import FakeModel
from seri.io.http_connection import HttpClient, ReadTimeout, TransportError
from seri.io.provider import ProviderClient
from seri.pure.provider_failure import ProviderFailure
from seri.pure.records import user
from seri.pure.stream_assembly import StreamResult
from seri.pure.wire import build_request
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
OK = json_answer(b'{"ok": true}')


def provider(url: str, **options: Any) -> ProviderClient:
    settings: dict[str, Any] = {"sleep": lambda _s: None, "jitter": lambda: 0.5}
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
    server = serve(servers, send(OK))
    client = HttpClient()
    for _ in range(3):
        with client.request("GET", server.url("/v1/models")) as response:
            assert response.read() == b'{"ok": true}'
    client.close()
    assert (server.connections, len(server.requests)) == (1, 3)


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
    server = serve(servers, _close_after(OK))
    client = HttpClient()
    with client.request("GET", server.url("/v1/models")) as response:
        assert response.read() == b'{"ok": true}'
    time.sleep(0.3)  # the server has closed its end by now
    with client.request("POST", server.url("/v1/chat"), b"{}") as response:
        assert response.status_code == 200
        assert response.read() == b'{"ok": true}'
    client.close()
    assert len(server.requests) == 2  # the second call reached the server once
    assert server.connections == 2


def test_a_request_that_crossed_the_close_of_a_kept_connection_is_sent_again(
    servers: list[RawServer],
) -> None:
    """The server reads the second request and hangs up without a byte of answer (its idle
    close crossed the request): nothing of the answer arrived, so it goes again, once."""
    server = serve(servers, send(OK), hang_up(), send(OK))
    client = HttpClient()
    for _ in range(2):
        with client.request("POST", server.url("/v1/chat"), b"{}") as response:
            assert response.read() == b'{"ok": true}'
    client.close()
    assert len(server.requests) == 3 and server.connections == 2


def test_an_answer_that_started_is_never_sent_again(servers: list[RawServer]) -> None:
    """A kept connection whose second answer is cut after its head: an error, not a resend."""
    cut = SSE_HEAD + b"5\r\ndata:"
    server = serve(servers, send(OK), send(cut, keep=False))
    client = HttpClient()
    with client.request("GET", server.url("/v1/models")) as response:
        response.read()
    with client.request("POST", server.url("/v1/chat"), b"{}") as response:
        assert response.status_code == 200
        with pytest.raises(TransportError, match="closed in the middle of a chunk"):
            response.read()
    client.close()
    assert len(server.requests) == 2


def test_the_stream_stops_at_done_and_its_connection_is_kept(servers: list[RawServer]) -> None:
    """The provider stops reading at [DONE]; the chunked body's last bytes, which come a
    moment later, are read before the next request, which goes over the same connection."""

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
            outcome = client.stream_chat(chat_body())
            assert isinstance(outcome, StreamResult) and outcome.message.text == text
            time.sleep(0.3)  # the tools run; the last chunk arrives
    assert (len(server.requests), server.connections) == (2, 1)


# --- framing the server gets wrong -----------------------------------------------------------


def test_a_head_over_64_kib_is_refused(servers: list[RawServer]) -> None:
    huge = b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * 70_000 + b"\r\n\r\n"
    server = serve(servers, send(huge, keep=False))
    with provider(server.url(), max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
    assert isinstance(failure, ProviderFailure)
    assert failure.kind == "connection"
    assert failure.message.startswith("could not reach the provider: a response head over 64 KiB")


def test_a_bad_chunk_size_is_an_error_not_a_hang(servers: list[RawServer]) -> None:
    server = serve(servers, send(SSE_HEAD + b"zz\r\nhello\r\n", keep=False))
    client = HttpClient(read_timeout=5)
    started = time.monotonic()
    with (
        client.request("POST", server.url("/v1/chat"), b"{}") as response,
        pytest.raises(TransportError, match="chunk size that is not a hexadecimal number"),
    ):
        response.read()
    assert time.monotonic() - started < 2


def test_a_stream_cut_mid_chunk_keeps_what_arrived(servers: list[RawServer]) -> None:
    body = sse_answer("partial")
    whole = chunked(body, size=len(body) // 2 + 1)
    server = serve(servers, send(SSE_HEAD + whole[: whole.index(b"[DONE]")], keep=False))
    with provider(server.url()) as client:
        result = client.stream_chat(chat_body())
    assert isinstance(result, StreamResult)
    assert not result.complete
    assert result.failure is not None and result.failure.kind == "interrupted"
    assert "closed in the middle of a chunk" in result.failure.message
    assert len(server.requests) == 1


def test_a_slow_drip_trips_the_watchdog(servers: list[RawServer]) -> None:
    """A keep-alive comment a byte at a time: every read gets a byte within the read timeout,
    and the content watchdog ends it."""
    comments = b": OPENROUTER PROCESSING\n\n" * 20
    server = serve(servers, drip(SSE_HEAD + chunked(comments, size=1), 0.01))
    started = time.monotonic()
    with provider(server.url(), idle_timeout=0.5) as client:
        result = client.stream_chat(chat_body())
    assert time.monotonic() - started < 3
    assert isinstance(result, StreamResult)
    assert result.failure is not None and result.failure.kind == "stalled"


def test_silence_is_a_read_timeout(servers: list[RawServer]) -> None:
    def silent(_conn: socket.socket, _request: bytes) -> bool:
        time.sleep(1.5)
        return False

    server = serve(servers, silent)
    client = HttpClient(read_timeout=0.3)
    with pytest.raises(ReadTimeout, match=r"no answer for 0\.3 s"):
        client.request("GET", server.url("/v1/models"))


# --- TLS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def _server_context(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost", "127.0.0.1").configure_cert(context)
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
                result = client.stream_chat(chat_body())
                assert isinstance(result, StreamResult) and result.message.text == text
            assert client.context_window("fake/model") is not None
    finally:
        relay.close()
    assert fake_model.request_headers[0]["authorization"] == f"Bearer {KEY}"


def test_https_with_the_wrong_ca_fails_with_a_clear_message(
    authority: trustme.CA, fake_model: FakeModel, tmp_path: Path
) -> None:
    bundle = tmp_path / "other-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    relay = tls_relay(_server_context(authority), fake_model.port)
    try:
        client = HttpClient(environ={"SSL_CERT_FILE": str(bundle)})
        with pytest.raises(TransportError) as caught:
            client.request("GET", f"https://localhost:{relay.port}/v1/models")
    finally:
        relay.close()
    message = str(caught.value)
    assert message.startswith("the TLS certificate of localhost could not be verified (")
    assert "point SSL_CERT_FILE at its CA bundle" in message
    assert fake_model.requests == []


def test_an_unreadable_ca_file_is_named(tmp_path: Path) -> None:
    client = HttpClient(environ={"SSL_CERT_FILE": str(tmp_path / "missing.pem")})
    with pytest.raises(TransportError, match=r"missing\.pem \(SSL_CERT_FILE\) cannot be loaded"):
        client.request("GET", "https://localhost:9/v1/models")


# --- a real proxy ---------------------------------------------------------------------------


def test_a_real_proxy_carries_https_by_connect_and_http_in_absolute_form(
    authority: trustme.CA, tmp_path: Path, servers: list[RawServer]
) -> None:
    host = outward_address()
    plain = serve(servers, send(OK), host=host)
    secure = serve(servers, send(OK), host=host, tls=_server_context_for(authority, host))
    bundle = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(bundle))
    with tinyproxy(tmp_path, user="seri", password="s3cr3t") as (port, log):
        # Percent-encoded in the URL, decoded for Proxy-Authorization.
        proxy = f"http://seri:s%33cr%33t@127.0.0.1:{port}"
        environ = {"HTTPS_PROXY": proxy, "http_proxy": proxy, "SSL_CERT_FILE": str(bundle)}
        client = HttpClient(environ=environ)
        for server in (secure, plain):
            with client.request("GET", server.url("/v1/models")) as response:
                assert response.read() == b'{"ok": true}'
        client.close()
        carried = log.read_text()
    assert f"CONNECT {host}:{secure.port} HTTP/1.1" in carried
    assert f"GET http://{host}:{plain.port}/v1/models HTTP/1.1" in carried
    # tinyproxy says who carried a plain request; a tunnelled one it cannot see into.
    assert b"(tinyproxy/" in plain.requests[0].lower()
    assert b"proxy-authorization" not in plain.requests[0].lower()


def test_the_proxys_refusal_names_it_without_its_password(
    tmp_path: Path, servers: list[RawServer]
) -> None:
    host = outward_address()
    server = serve(servers, send(OK), host=host)
    with tinyproxy(tmp_path, user="seri", password="right") as (port, _log):
        secret = f"http://seri:wrong-SECRET@127.0.0.1:{port}"
        client = HttpClient(environ={"HTTPS_PROXY": secret})
        with pytest.raises(TransportError) as caught:
            client.request("GET", server.url("/v1/models", scheme="https"))
    message = str(caught.value)
    assert message.startswith(f"the proxy http://127.0.0.1:{port} (set by HTTPS_PROXY) refused")
    # tinyproxy answers 401 where RFC 9110 says 407; either is a refusal.
    assert ("407" in message or "401" in message) and "SECRET" not in message


def test_no_proxy_and_loopback_go_direct(tmp_path: Path, servers: list[RawServer]) -> None:
    """The proxy named is a port nothing listens on: only a direct request can succeed."""
    host = outward_address()
    remote, local = serve(servers, send(OK), host=host), serve(servers, send(OK))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    for no_proxy in (host, "*", f"example.com, {host}:{remote.port}"):
        client = HttpClient(environ={"HTTP_PROXY": dead, "NO_PROXY": no_proxy})
        with client.request("GET", remote.url("/v1/models")) as response:
            assert response.read() == b'{"ok": true}'
        client.close()
    client = HttpClient(environ={"HTTP_PROXY": dead})
    with client.request("GET", local.url("/v1/models")) as response:
        assert response.status_code == 200
    with pytest.raises(TransportError, match=r"the proxy http://127\.0\.0\.1:\d+ \(set by HTTP_"):
        client.request("GET", remote.url("/v1/models"))


def _server_context_for(ca: trustme.CA, host: str) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(host).configure_cert(context)
    return context


def test_a_proxy_seri_cannot_speak_to_is_refused_by_name() -> None:
    client = HttpClient(environ={"ALL_PROXY": "socks5://user:SECRET@127.0.0.1:1080"})
    with pytest.raises(TransportError) as caught:
        client.request("GET", "https://example.com/v1/models")
    assert str(caught.value) == (
        "the proxy socks5://127.0.0.1:1080 (set by ALL_PROXY): seri goes through http:// "
        "proxies only"
    )


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.com/v1", "the URL is not an http:// or https:// URL with a host"),
        ("localhost:8080/v1", "the URL is not an http:// or https:// URL with a host"),
        ("http://localhost:99999/v1", "the URL's port is not a number from 1 to 65535"),
    ],
)
def test_a_url_seri_cannot_ask_is_a_connection_failure(url: str, why: str) -> None:
    with provider(url, max_attempts=1) as client:
        failure = client.stream_chat(chat_body())
    assert isinstance(failure, ProviderFailure) and failure.kind == "connection"
    assert failure.message.startswith(f"could not reach the provider: {why}")


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


def test_an_answer_sent_before_the_request_was_read_is_heard(servers: list[RawServer]) -> None:
    """A server that refuses a body too large at once and closes, while seri still sends:
    the refusal is what seri reports, not a broken pipe."""
    refusal = b'{"error": {"code": 413, "message": "Payload too large"}}'
    head = (
        b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
        b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(refusal)
    )
    listener = socket.create_server(("127.0.0.1", 0))

    def refuse() -> None:
        conn, _ = listener.accept()
        conn.recv(1024)
        conn.sendall(head + refusal)
        conn.shutdown(socket.SHUT_WR)
        time.sleep(0.5)  # unread bytes at close would reset the connection before it is read
        conn.close()

    import threading

    threading.Thread(target=refuse, daemon=True).start()
    huge = b'{"pad": "' + b"x" * 32_000_000 + b'"}'
    client = HttpClient(write_timeout=10)
    try:
        with client.request(
            "POST", f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat", huge
        ) as response:
            assert response.status_code == 413
            assert response.read() == refusal
    finally:
        listener.close()


def test_the_otlp_poster_sends_url_credentials_and_reads_a_refusal(
    servers: list[RawServer],
) -> None:
    """The OTLP sender rides the same client: the endpoint's user:password@ as Basic
    authorization (as httpx sent it), the settings' headers over seri's own, the answer read."""
    from seri.io.otlp_sender import OtlpPoster
    from seri.pure.otlp_settings import Target
    from seri.pure.redaction import Redactor

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
    assert b"\r\nAuthorization: Basic dXNlcjpwQHNz\r\n" in request  # user:p@ss
    assert b"\r\nuser-agent: mine\r\n" in request and b"OTLP/HTTP" not in request
    assert request.startswith(b"POST /v1/traces HTTP/1.1\r\n")
