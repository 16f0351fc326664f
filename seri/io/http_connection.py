"""HTTP/1.1 over one kept-alive connection: what seri's provider client talks through.

seri's own, instead of httpx, because a ``seri chat -p`` waits for its HTTP client before its
first request, and httpx brings urllib.request, http.client, email, idna, h11 and httpcore
(~55 ms of the GIL on the 2-core machine). This needs ``socket`` and ``select``; ``ssl`` and the
CA bundle load only for https. The bytes' meaning is ``seri.pure.http_framing``'s; which proxy
a request takes is ``seri.pure.proxy_route``'s. What stays here is the part only I/O can do:

* connecting with a connect timeout; TLS with SNI and certificate checks, the CAs from
  ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when set, else certifi's bundle (httpx's choice, so nothing
  changes for anyone), else the system's;
* a read timeout per network read (the provider's idle timeout) and a write timeout;
* one connection kept alive across the requests of a run. A kept connection that the server
  closed meanwhile is noticed before sending, and a request on it that gets nothing back (the
  close crossed it) is sent once more on a new connection: only then, since a request whose
  answer started must never be sent twice;
* proxies from the environment: CONNECT tunnels for https, absolute-form requests for http,
  the proxy's credentials (in its URL) as ``Proxy-Authorization``, never in a message.

Redirects are not followed (the provider answers where it is asked). The OTLP sender
(``seri.io.otlp_sender``) posts through this too; MCP over HTTP (``seri.io.mcp_http``) stays on
httpx, which follows its servers' redirects, and is not on the way to a chat's first request.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from seri.pure.http_framing import ResponseHead, ResponseParser, request_head
from seri.pure.proxy_route import ProxyChoice, proxy_for

if TYPE_CHECKING:
    import ssl

_READ_SIZE = 65536
# What is read of an answer the caller stopped reading, to keep its connection.
_DRAIN_LIMIT = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


class TransportError(Exception):
    """No answer, or not all of it: the message names hosts and what happened, never a
    header's value or a proxy's password."""


class TransportTimeout(TransportError):
    pass


class ConnectTimeout(TransportTimeout):
    pass


class ReadTimeout(TransportTimeout):
    pass


class WriteTimeout(TransportTimeout):
    pass


class _Target:
    """Where a URL points, and how its request line and Host header read."""

    def __init__(self, url: str) -> None:
        # Said without the URL, which the caller names (and which could hold a password).
        parts = urlsplit(url)
        if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise TransportError("the URL is not an http:// or https:// URL with a host")
        try:
            port = parts.port
        except ValueError:
            raise TransportError("the URL's port is not a number from 1 to 65535") from None
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = port or _DEFAULT_PORTS[parts.scheme]
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = f"{shown}:{self.port}"
        self.host_header = shown if self.port == _DEFAULT_PORTS[self.scheme] else self.authority


class _Proxy:
    """A proxy named by the environment; ``shown`` is its URL without credentials."""

    def __init__(self, choice: ProxyChoice) -> None:
        url = choice.url if "://" in choice.url else f"http://{choice.url}"
        parts = urlsplit(url)
        self.shown = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        self.where = f"the proxy {self.shown} (set by {choice.variable})"
        if parts.scheme != "http" or not parts.hostname:
            raise TransportError(f"{self.where}: seri goes through http:// proxies only")
        self.host = parts.hostname
        self.port = parts.port or 80
        credentials = basic_credentials(url)
        self.headers = (("Proxy-Authorization", credentials),) if credentials else ()


def basic_credentials(url: str) -> str:
    """A URL's ``user:password@`` (percent-decoded) as a Basic authorization value, or ``""``."""
    parts = urlsplit(url)
    if parts.username is None:
        return ""
    import binascii

    secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
    return "Basic " + binascii.b2a_base64(secret, newline=False).decode("ascii")


_TLS_CONTEXTS: dict[tuple[str, str], ssl.SSLContext] = {}


def _certifi_bundle() -> str:
    """certifi's cacert.pem, found without importing certifi (which loads importlib.resources)."""
    import importlib.util

    spec = importlib.util.find_spec("certifi")
    if spec is None or spec.origin is None:
        return ""
    bundle = os.path.join(os.path.dirname(spec.origin), "cacert.pem")
    return bundle if os.path.isfile(bundle) else ""


def tls_context(environ: Mapping[str, str]) -> ssl.SSLContext:
    """The verifying TLS context, made once per CA choice (loading a bundle costs ~15 ms)."""
    import ssl

    cafile, capath = environ.get("SSL_CERT_FILE", ""), environ.get("SSL_CERT_DIR", "")
    if not cafile and not capath:
        cafile = _certifi_bundle()
    key = (cafile, capath)
    if key not in _TLS_CONTEXTS:
        try:
            _TLS_CONTEXTS[key] = ssl.create_default_context(
                cafile=cafile or None, capath=capath or None
            )
        except (OSError, ssl.SSLError) as exc:
            named = "SSL_CERT_FILE" if environ.get("SSL_CERT_FILE") else "SSL_CERT_DIR"
            raise TransportError(
                f"the CA certificates in {cafile or capath} ({named}) cannot be loaded: "
                f"{getattr(exc, 'strerror', None) or exc}"
            ) from None
    return _TLS_CONTEXTS[key]


class _Connection:
    """A socket to an origin (or through a proxy to it), and an answer not read to its end."""

    def __init__(self, sock: socket.socket, key: tuple[str, ...]) -> None:
        self.sock = sock
        self.key = key
        self.unfinished: ResponseParser | None = None

    def close(self) -> None:
        self.sock.close()

    def settled(self) -> bool:
        """Whether the connection can carry the next request: the server has not closed it,
        and the rest of an answer the caller stopped reading has arrived and ended."""
        unfinished, drained = self.unfinished, 0
        self.sock.settimeout(0.0)
        try:
            while True:
                try:
                    data = self.sock.recv(_READ_SIZE)
                except (BlockingIOError, InterruptedError):
                    break
                except OSError as exc:
                    # ssl's "want read" is an OSError too: nothing more has arrived.
                    return type(exc).__name__ == "SSLWantReadError"
                drained += len(data)
                if not data or unfinished is None or drained > _DRAIN_LIMIT:
                    return False
                if unfinished.feed(data).error is not None:
                    return False
        finally:
            self.sock.settimeout(None)
        return unfinished is None or unfinished.reusable


class Response:
    """An answer whose head has arrived; the body is read with ``iter_bytes`` or ``read``.
    Closing it gives its connection back for the next request when that is safe."""

    def __init__(
        self, client: HttpClient, connection: _Connection, parser: ResponseParser, first: bytes
    ) -> None:
        assert parser.head is not None
        self.head: ResponseHead = parser.head
        self.status_code = parser.head.status
        self._client = client
        self._connection: _Connection | None = connection
        self._parser = parser
        self._first = first
        self._broken = False

    def iter_bytes(self) -> Iterator[bytes]:
        """The body's bytes as they arrive; ``ReadTimeout`` when a read waits longer than
        the read timeout, ``TransportError`` when the body cannot be read to its end."""
        if self._first:
            first, self._first = self._first, b""
            yield first
        if self._parser.error is not None:
            raise TransportError(self._parser.error.message)
        connection = self._connection
        while connection is not None and not self._parser.done:
            try:
                data = self._client.receive(connection)
            except TransportError:
                self._broken = True
                raise
            progress = self._parser.feed(data) if data else self._parser.finish()
            if progress.error is not None:
                raise TransportError(progress.error.message)
            if progress.body:
                yield progress.body

    def read(self, limit: int | None = None) -> bytes:
        """The body, or its first ``limit`` bytes and a little more."""
        body = bytearray()
        for piece in self.iter_bytes():
            body += piece
            if limit is not None and len(body) >= limit:
                break
        return bytes(body)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and self._broken:
            connection.close()
        elif connection is not None:
            self._client.release(connection, self._parser)

    def __enter__(self) -> Response:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class HttpClient:
    """Requests with ``headers`` on every one, over one connection kept between them.

    ``environ`` is read for proxies and CA certificates (``os.environ`` by default).
    """

    def __init__(
        self,
        *,
        headers: tuple[tuple[str, str], ...] = (),
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        write_timeout: float = 60.0,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._headers = (("User-Agent", "seri"), *headers)
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._environ = os.environ if environ is None else environ
        self._idle: _Connection | None = None

    def set_read_timeout(self, seconds: float) -> None:
        """The wait of every network read from now on (the next read of a response too): a
        caller that knows a server will think for longer says so."""
        self._read_timeout = seconds

    def close(self) -> None:
        idle, self._idle = self._idle, None
        if idle is not None:
            idle.close()

    def request(
        self,
        method: str,
        url: str,
        body: bytes | None = None,
        headers: tuple[tuple[str, str], ...] = (),
        *,
        while_waiting: Callable[[], object] | None = None,
    ) -> Response:
        """Send a request and wait for its answer's head (the body is the caller's to read:
        close the response when done with it). ``while_waiting`` is called once the request
        is sent, before the wait: work the caller needs for the answer, done in the server's
        time instead of before the request."""
        target = _Target(url)
        choice = proxy_for(self._environ, target.scheme, target.host, target.port)
        proxy = _Proxy(choice) if choice is not None else None
        key = (target.scheme, target.authority, proxy.shown if proxy else "")
        extra = proxy.headers if proxy is not None and target.scheme == "http" else ()
        line_target = target.path
        if proxy is not None and target.scheme == "http":
            line_target = f"http://{target.host_header}{target.path}"
        length = len(body) if body is not None else (0 if method in ("POST", "PUT") else None)
        message = request_head(
            method, line_target, target.host_header, (*self._headers, *headers, *extra), length
        )
        message += body or b""
        connection = self._kept(key)
        if connection is not None:
            try:
                return self._exchange(connection, method, message, while_waiting)
            except _NothingBack:
                pass  # the server closed the kept connection as the request crossed it
        connection = _Connection(self._open(target, proxy), key)
        try:
            return self._exchange(connection, method, message, while_waiting)
        except _NothingBack as exc:
            raise TransportError(str(exc)) from None

    # --- connections --------------------------------------------------------------------------

    def _kept(self, key: tuple[str, ...]) -> _Connection | None:
        idle, self._idle = self._idle, None
        if idle is None:
            return None
        if idle.key == key and idle.settled():
            idle.unfinished = None
            return idle
        idle.close()
        return None

    def release(self, connection: _Connection, parser: ResponseParser) -> None:
        """Keep the connection for the next request if its answer ended cleanly, or may still
        (the rest is read before the next request); close it otherwise."""
        keep = parser.reusable or (not parser.done and parser.error is None)
        if not keep:
            connection.close()
            return
        connection.unfinished = None if parser.done else parser
        self.close()
        self._idle = connection

    def _open(self, target: _Target, proxy: _Proxy | None) -> socket.socket:
        # The CAs first: a CA file that cannot be read is said before any connecting.
        context = tls_context(self._environ) if target.scheme == "https" else None
        if proxy is None:
            sock = self._connect(target.host, target.port)
        else:
            sock = self._connect(proxy.host, proxy.port, proxy)
            if target.scheme == "https":
                self._tunnel(sock, target, proxy)
        if context is not None:
            sock = self._tls(sock, context, target.host)
        return sock

    def _connect(self, host: str, port: int, proxy: _Proxy | None = None) -> socket.socket:
        """A TCP connection; its failure names the proxy when it is one (the caller names
        the URL it asked for)."""
        try:
            sock = socket.create_connection((host, port), timeout=self._connect_timeout)
        except TimeoutError:
            where = proxy.where if proxy is not None else f"{host}:{port}"
            raise ConnectTimeout(
                f"connecting to {where} took over {self._connect_timeout:g} s"
            ) from None
        except OSError as exc:
            raise TransportError(f"{proxy.where}: {exc}" if proxy else str(exc)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def _tunnel(self, sock: socket.socket, target: _Target, proxy: _Proxy) -> None:
        message = request_head(
            "CONNECT", target.authority, target.authority, proxy.headers, content_length=None
        )
        tunnel = _Connection(sock, ())
        try:
            self._send(tunnel, message)
            parser, _ = self._head(tunnel, "CONNECT")
        except TransportError as exc:
            sock.close()
            raise TransportError(f"{proxy.where}: {exc}") from None
        head = parser.head
        assert head is not None
        if not 200 <= head.status < 300:
            sock.close()
            raise TransportError(
                f"{proxy.where} refused the tunnel to {target.authority}: "
                f"{head.status} {head.reason}".rstrip()
            )

    def _tls(self, sock: socket.socket, context: ssl.SSLContext, host: str) -> socket.socket:
        import ssl

        sock.settimeout(self._connect_timeout)
        try:
            return context.wrap_socket(sock, server_hostname=host)
        except ssl.SSLCertVerificationError as exc:
            sock.close()
            raise TransportError(
                f"the TLS certificate of {host} could not be verified ({exc.verify_message}); "
                "if your network inspects TLS, point SSL_CERT_FILE at its CA bundle"
            ) from None
        except TimeoutError:
            sock.close()
            raise ConnectTimeout(
                f"the TLS handshake with {host} took over {self._connect_timeout:g} s"
            ) from None
        except OSError as exc:
            sock.close()
            raise TransportError(f"TLS with {host} failed: {exc}") from None

    # --- bytes --------------------------------------------------------------------------------

    def _exchange(
        self,
        connection: _Connection,
        method: str,
        message: bytes,
        while_waiting: Callable[[], object] | None,
    ) -> Response:
        try:
            try:
                self._send(connection, message)
                if while_waiting is not None:
                    while_waiting()
            except _NothingBack as unsent:
                # A server may answer before it has read all of a request (413 for a body
                # too large) and close: its answer, when there is one, says more.
                try:
                    parser, first = self._head(connection, method)
                except TransportError:
                    raise unsent from None
            else:
                parser, first = self._head(connection, method)
        except BaseException:
            connection.close()
            raise
        return Response(self, connection, parser, first)

    def _send(self, connection: _Connection, message: bytes) -> None:
        connection.sock.settimeout(self._write_timeout)
        try:
            connection.sock.sendall(message)
        except TimeoutError:
            raise WriteTimeout(f"sending the request took over {self._write_timeout:g} s") from None
        except OSError as exc:
            raise _NothingBack(str(exc) or type(exc).__name__) from None

    def _head(self, connection: _Connection, method: str) -> tuple[ResponseParser, bytes]:
        parser = ResponseParser(method)
        while True:
            try:
                data = self.receive(connection)
            except TransportError as exc:
                if parser.started or isinstance(exc, TransportTimeout):
                    raise
                raise _NothingBack(str(exc)) from None
            if not data and not parser.started:
                raise _NothingBack("the server closed the connection without answering")
            progress = parser.feed(data) if data else parser.finish()
            if parser.head is not None:
                # A body that breaks in the same read as the head is read to where it broke.
                return parser, progress.body
            if progress.error is not None:
                raise TransportError(progress.error.message)

    def receive(self, connection: _Connection) -> bytes:
        """One network read (``b""`` at the close), within the read timeout."""
        connection.sock.settimeout(self._read_timeout)
        try:
            return connection.sock.recv(_READ_SIZE)
        except TimeoutError:
            raise ReadTimeout(f"no answer for {self._read_timeout:g} s") from None
        except OSError as exc:
            raise TransportError(str(exc) or type(exc).__name__) from None


class _NothingBack(TransportError):
    """The request could not be sent, or nothing of an answer came back: a request on a kept
    connection that fails this way is sent again on a new one."""
