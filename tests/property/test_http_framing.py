"""The invariants of HTTP/1.1 framing (seri.pure.http_framing) and of the proxy choice
(seri.pure.proxy_route).

* any split of the same bytes gives the same head, body and end (or the same error);
* a chunked body decodes to what was encoded, whatever its chunks, extensions and trailers;
* malformed heads and chunk sizes give an error value: never an exception, never a wait for
  bytes that would not help (``finish`` always ends it);
* a loopback server never goes through a proxy, and NO_PROXY=* sends everything direct.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seri.pure.http_framing import (
    MAX_HEAD_BYTES,
    FramingError,
    ResponseHead,
    ResponseParser,
    request_head,
)
from seri.pure.proxy_route import ProxyChoice, proxy_for

TOKEN = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    min_size=1,
    max_size=12,
)
VALUE = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=30)
FRAMING_HEADERS = {"content-length", "transfer-encoding", "connection"}


def feed_all(data: bytes, cuts: list[int], method: str = "GET") -> tuple[Any, ...]:
    """Feed ``data`` cut at ``cuts``, then the close; what came out, as one comparable value."""
    parser = ResponseParser(method)
    body, heads, error = bytearray(), [], None
    edges = [0, *sorted({c % (len(data) + 1) for c in cuts}), len(data)]
    for start, end in itertools.pairwise(edges):
        progress = parser.feed(data[start:end])
        body += progress.body
        if progress.head is not None:
            heads.append(progress.head)
        error = error or progress.error
    done_before_close = parser.done
    end_progress = parser.finish()
    error = error or end_progress.error
    return (tuple(heads), bytes(body), done_before_close, error, parser.trailers)


@st.composite
def responses(draw: st.DrawFn) -> tuple[bytes, bytes, str]:
    """A well-formed response, its body, and how that body is framed."""
    status = draw(st.sampled_from([200, 201, 400, 404, 429, 500, 503]))
    headers = draw(
        st.lists(
            st.tuples(TOKEN, VALUE).filter(lambda h: h[0].lower() not in FRAMING_HEADERS),
            max_size=6,
        )
    )
    body = draw(st.binary(max_size=300))
    framing = draw(st.sampled_from(["length", "chunked", "close"]))
    lines = [f"HTTP/1.1 {status} Reason Phrase", *(f"{k}: {v}" for k, v in headers)]
    if framing == "length":
        lines.append(f"Content-Length: {len(body)}")
        payload = body
    elif framing == "chunked":
        lines.append("Transfer-Encoding: chunked")
        sizes = draw(st.lists(st.integers(1, 50), max_size=10))
        payload = encode_chunked(split_by(body, sizes), (), ())
    else:
        payload = body
    ending = draw(st.sampled_from(["\r\n", "\n"]))
    head = ending.join(lines) + ending + ending
    return head.encode("latin-1") + payload, body, framing


def split_by(body: bytes, sizes: list[int]) -> list[bytes]:
    pieces, at = [], 0
    for size in sizes:
        if at >= len(body):
            break
        pieces.append(body[at : at + size])
        at += size
    if at < len(body):
        pieces.append(body[at:])
    return pieces


def encode_chunked(
    pieces: list[bytes],
    extensions: tuple[str, ...],
    trailers: tuple[tuple[str, str], ...],
) -> bytes:
    """A chunked body as RFC 9112 §7.1 writes it (the test's own encoder)."""
    out = bytearray()
    for n, piece in enumerate(pieces):
        extension = f";{extensions[n % len(extensions)]}" if extensions else ""
        out += f"{len(piece):x}{extension}\r\n".encode() + piece + b"\r\n"
    out += b"0\r\n"
    for name, value in trailers:
        out += f"{name}: {value}\r\n".encode()
    return bytes(out + b"\r\n")


@given(responses(), st.lists(st.integers(0, 10_000), max_size=12))
def test_any_split_gives_the_same_head_and_body(
    response: tuple[bytes, bytes, str], cuts: list[int]
) -> None:
    data, body, framing = response
    whole = feed_all(data, [])
    assert feed_all(data, cuts) == whole
    (head,), got, done_before_close, error, _ = whole
    assert error is None
    assert got == body
    assert done_before_close == (framing != "close")
    assert isinstance(head, ResponseHead)


@given(
    st.lists(st.binary(min_size=1, max_size=80), max_size=8),
    st.lists(st.sampled_from(["ext", "name=value", 'q="quoted;text"', " a = b "]), max_size=3),
    st.lists(st.tuples(TOKEN, VALUE), max_size=3),
    st.lists(st.integers(0, 2000), max_size=8),
)
def test_chunked_round_trip(
    pieces: list[bytes],
    extensions: list[str],
    trailers: list[tuple[str, str]],
    cuts: list[int],
) -> None:
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + encode_chunked(
        pieces, tuple(extensions), tuple(trailers)
    )
    _, body, done, error, got_trailers = feed_all(data, cuts, "POST")
    assert error is None and done
    assert body == b"".join(pieces)
    assert got_trailers == tuple((name, value.strip(" \t")) for name, value in trailers)


@given(st.binary(max_size=400), st.lists(st.integers(0, 500), max_size=6))
def test_any_bytes_end_in_a_value_never_an_exception(data: bytes, cuts: list[int]) -> None:
    heads, _, _, error, _ = feed_all(data, cuts)
    assert error is None or isinstance(error, FramingError)
    assert feed_all(data, []) == feed_all(data, cuts)
    if not heads:
        # No head came out: the bytes were not a response, and finish said so.
        assert isinstance(error, FramingError)


@given(
    st.one_of(
        st.text(alphabet="ghijklmnopqrstuvwxyz-+ ;.", min_size=1, max_size=10).filter(
            lambda s: s.strip(" ") and not s.startswith(";")
        ),
        st.text(alphabet="0123456789abcdef", min_size=17, max_size=30),
    ),
    st.lists(st.integers(0, 100), max_size=4),
)
def test_a_malformed_chunk_size_is_an_error(size: str, cuts: list[int]) -> None:
    data = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + size.encode() + b"\r\nxx"
    _, _, _, error, _ = feed_all(data, cuts)
    assert error == FramingError("a chunk size that is not a hexadecimal number")


@given(
    st.sampled_from(
        [
            b"HTTP/1.1 2OO OK\r\n\r\n",
            b"HTTP/1.1 20 OK\r\n\r\n",
            b"HTTP/2 200\r\n\r\n",
            b"SSH-2.0-OpenSSH_9.2\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n continuation first\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
        ]
    ),
    st.lists(st.integers(0, 100), max_size=4),
)
def test_malformed_heads_are_errors(data: bytes, cuts: list[int]) -> None:
    _, _, done, error, _ = feed_all(data, cuts)
    assert isinstance(error, FramingError) and not done


@given(st.integers(MAX_HEAD_BYTES - 40, MAX_HEAD_BYTES + 40), st.lists(st.integers(), max_size=5))
def test_the_head_limit_holds_at_any_split(size: int, cuts: list[int]) -> None:
    start = b"HTTP/1.1 200 OK\r\nX-Pad: "
    data = start + b"a" * (size - len(start) - 4) + b"\r\n\r\n"
    assert len(data) == size
    _, _, done, error, _ = feed_all(data + b"body", [c % len(data) for c in cuts])
    if size > MAX_HEAD_BYTES:
        assert error == FramingError("a response head over 64 KiB")
    else:
        assert error is None and not done  # the body runs until the close


def test_framing_cases() -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nA: 1\r\na: 2\r\n\r\n"
    (head,), body, done, error, _ = feed_all(interim, [])
    assert (head.status, body, done, error) == (204, b"", True, None)
    assert head.get("A") == "1, 2"
    assert head.as_mapping() == {"a": "1, 2"}
    folded = b"HTTP/1.1 200 OK\r\nX: a\r\n  b\r\nContent-Length: 0\r\n\r\n"
    assert feed_all(folded, [])[0][0].get("x") == "a b"
    (head,), body, done, _, _ = feed_all(
        b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n", [], "HEAD"
    )
    assert done and body == b""
    parser = ResponseParser("CONNECT")
    assert parser.feed(b"HTTP/1.1 200 Connection established\r\n\r\n").done
    cut = ResponseParser()
    cut.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc")
    assert cut.finish().error == FramingError("the connection closed in the middle of the body")


def test_keep_alive() -> None:
    def reusable(data: bytes) -> bool:
        parser = ResponseParser()
        parser.feed(data)
        return parser.reusable

    assert reusable(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    assert not reusable(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
    assert not reusable(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
    assert not reusable(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok+more")
    assert not reusable(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\no")


def test_request_head() -> None:
    head = request_head("POST", "/v1/chat", "example.com", (("Authorization", "Bearer k"),), 7)
    assert head == (
        b"POST /v1/chat HTTP/1.1\r\nHost: example.com\r\nAccept-Encoding: identity\r\n"
        b"Connection: keep-alive\r\nAuthorization: Bearer k\r\nContent-Length: 7\r\n\r\n"
    )
    for bad in ((("X-Key", "a\r\nInjected: 1"),), (("Bad Name", "v"),)):
        with pytest.raises(
            ValueError, match=r"^the (header name 'Bad Name'|X-Key header)"
        ) as caught:
            request_head("GET", "/", "h", bad, None)
        assert "Injected" not in str(caught.value)


# --- proxies ------------------------------------------------------------------------------------

HOSTS = st.sampled_from(["api.openrouter.ai", "openrouter.ai", "example.com", "10.1.2.3"])
LOOPBACK = st.sampled_from(["127.0.0.1", "localhost", "::1", "127.5.6.7", "[::1]", "a.localhost"])
PROXY_VARIABLES = (
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
)
ENVIRONS = st.dictionaries(
    st.sampled_from((*PROXY_VARIABLES, "no_proxy", "NO_PROXY", "REQUEST_METHOD")),
    st.sampled_from(["", "http://proxy:3128", "proxy:8080", "example.com", "*", "GET"]),
)


@given(ENVIRONS, LOOPBACK, st.sampled_from(["http", "https"]), st.integers(1, 65535))
def test_a_loopback_server_never_goes_through_a_proxy(
    environ: dict[str, str], host: str, scheme: str, port: int
) -> None:
    assert proxy_for(environ, scheme, host, port) is None


@given(ENVIRONS, HOSTS, st.sampled_from(["http", "https"]))
def test_no_proxy_star_sends_everything_direct(
    environ: dict[str, str], host: str, scheme: str
) -> None:
    environ = {k: v for k, v in environ.items() if k.lower() != "no_proxy"}
    assert proxy_for({**environ, "NO_PROXY": "*"}, scheme, host, 443) is None


def test_proxy_choice() -> None:
    env = {"HTTPS_PROXY": "http://p:1", "HTTP_PROXY": "http://q:2", "https_proxy": "http://r:3"}
    assert proxy_for(env, "https", "api.openrouter.ai", 443) == ProxyChoice(
        "https_proxy", "http://r:3"
    )
    assert proxy_for(env, "http", "example.com", 80) == ProxyChoice("HTTP_PROXY", "http://q:2")
    cgi = {"HTTP_PROXY": "http://q:2", "REQUEST_METHOD": "GET"}
    assert proxy_for(cgi, "http", "example.com", 80) is None
    assert proxy_for({"ALL_PROXY": "http://a:1"}, "https", "x.org", 443) == ProxyChoice(
        "ALL_PROXY", "http://a:1"
    )
    base = {"HTTPS_PROXY": "http://p:1"}
    for no_proxy, host, direct in [
        ("openrouter.ai", "api.openrouter.ai", True),
        ("openrouter.ai", "openrouter.ai", True),
        (".openrouter.ai", "openrouter.ai", True),
        ("*.openrouter.ai", "api.openrouter.ai", True),
        ("openrouter.ai", "notopenrouter.ai", False),
        ("example.com, openrouter.ai:8443", "openrouter.ai", False),
        ("example.com openrouter.ai:443", "openrouter.ai", True),
        ("10.1.2.3", "10.1.2.3", True),
        ("https://openrouter.ai", "openrouter.ai", True),
    ]:
        choice = proxy_for({**base, "NO_PROXY": no_proxy}, "https", host, 443)
        assert (choice is None) == direct, (no_proxy, host)
