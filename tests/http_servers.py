"""Real servers for the HTTP client's tests: a raw TCP server that answers each request with
whatever bytes (and hang-ups) a test scripts, optionally behind TLS; a TLS relay in front of
the fake model; and Debian's tinyproxy as a real forward proxy.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scripts.tcp_relay import Relay

# An answer: given the connection and the request's head (and body), write what it likes;
# return False to close the connection afterwards.
Answer = Callable[[socket.socket, bytes], bool]


def read_request(conn: socket.socket) -> bytes | None:
    """One request's head and body (by Content-Length), or None when the client closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return None
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


class RawServer:
    """Answers the n-th request (over all connections) with ``answers[n]`` (the last one
    again when they run out). Counts connections and keeps every request it read."""

    def __init__(
        self,
        answers: list[Answer],
        *,
        host: str = "127.0.0.1",
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.answers = answers
        self.requests: list[bytes] = []
        self.connections = 0
        self.tls = tls
        self.listener = socket.create_server((host, 0))
        self.host = host
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/v1", scheme: str = "") -> str:
        scheme = scheme or ("https" if self.tls else "http")
        return f"{scheme}://{self.host}:{self.port}{path}"

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            if self.tls is not None:
                conn = self.tls.wrap_socket(conn, server_side=True)
            while (request := read_request(conn)) is not None:
                self.requests.append(request)
                answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
                if not answer(conn, request):
                    break
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    def close(self) -> None:
        self.listener.close()


def send(data: bytes, *, keep: bool = True) -> Answer:
    """Write ``data``; keep the connection open for the next request or close it."""

    def answer(conn: socket.socket, _request: bytes) -> bool:
        conn.sendall(data)
        return keep

    return answer


def drip(data: bytes, interval: float) -> Answer:
    """Write ``data`` a byte at a time, ``interval`` seconds apart, then close."""

    def answer(conn: socket.socket, _request: bytes) -> bool:
        for byte in data:
            conn.sendall(bytes([byte]))
            time.sleep(interval)
        return False

    return answer


def hang_up() -> Answer:
    """Read the request, answer nothing, close."""
    return lambda _conn, _request: False


def json_answer(body: bytes, *, extra: str = "") -> bytes:
    return (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{extra}"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def tls_relay(context: ssl.SSLContext, target_port: int) -> Relay:
    """Terminates TLS (the certificate trustme made) and relays the bytes to a plain server."""
    return Relay(target_port, wrap=lambda raw: context.wrap_socket(raw, server_side=True))


def outward_address() -> str:
    """An address of this machine that is not loopback (a proxy is never used for loopback)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the route
        address = probe.getsockname()[0]
        if not address.startswith("127."):
            return str(address)
    for address in socket.gethostbyname_ex(socket.gethostname())[2]:
        if not address.startswith("127."):
            return address
    pytest.skip("this machine has no address besides loopback to put behind a proxy")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def tinyproxy(directory: Path, *, user: str = "", password: str = "") -> Iterator[tuple[int, Path]]:
    """Debian's tinyproxy on a loopback port (``make test`` installs it); yields the port and
    its log file, which names every request it carried."""
    program = shutil.which("tinyproxy")
    if program is None:
        pytest.fail("tinyproxy is not installed: `make test-programs` installs it")
    port, log = _free_port(), directory / "tinyproxy.log"
    config = directory / "tinyproxy.conf"
    lines = [
        f"Port {port}",
        "Listen 127.0.0.1",
        "Allow 127.0.0.1",
        "Timeout 30",
        f'LogFile "{log}"',
        "LogLevel Info",
        "MaxClients 20",
    ]
    if user:
        lines.append(f"BasicAuth {user} {password}")
    config.write_text("\n".join(lines) + "\n")
    errors = directory / "tinyproxy.err"
    with errors.open("wb") as sink:
        process = subprocess.Popen(
            [program, "-d", "-c", str(config)], stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            if time.monotonic() > deadline or process.poll() is not None:
                pytest.fail(f"tinyproxy did not start: {errors.read_text()}")
            time.sleep(0.05)
        yield port, log
    finally:
        process.terminate()
        process.wait(timeout=10)
