"""The process's httpx clients (seri.io.provider.http_client): one per way of talking and
environment, httpx imported only when one is made, and a loopback server never reached through a
proxy."""

from __future__ import annotations

import ast
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from seri.io.provider.http_client import new_client, shared_client
from tests.http_servers import RawServer, json_answer, send

OK = json_answer(b'{"ok": true}')
SERI = Path(__file__).resolve().parents[3] / "seri"
# What would be a second HTTP stack beside httpx.
OTHER_HTTP = ("http.client", "urllib.request", "urllib3", "requests", "aiohttp", "httpcore", "h11")


@pytest.fixture
def dead_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every proxy variable names a port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(name, dead)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_importing_the_module_does_not_import_httpx() -> None:
    probe = "import sys, seri.io.provider.http_client; print('httpx' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_one_client_per_server_kind_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    first = shared_client("https://openrouter.ai/api/v1")
    assert shared_client("https://example.com/v1/traces") is first
    assert shared_client("http://127.0.0.1:8080/v1") is not first  # plain loopback: no CAs
    monkeypatch.setenv("SSL_CERT_FILE", "/nowhere/ca.pem")
    with pytest.raises(OSError):
        shared_client("https://openrouter.ai/api/v1")  # made anew, for the new CAs
    monkeypatch.delenv("SSL_CERT_FILE")
    assert shared_client("https://openrouter.ai/api/v1") is first


def test_httpx_is_the_only_http_client_and_its_clients_are_made_in_one_place() -> None:
    """One HTTP stack (issue 30): no seri module imports another HTTP library, and only
    seri/io/provider/http_client.py makes an httpx client, so proxies and TLS follow one set of
    rules."""
    others, makers = [], []
    for path in sorted(SERI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                names = []
            if any(
                name == other or name.startswith(f"{other}.")
                for name in names
                for other in OTHER_HTTP
            ):
                others.append(path.name)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in {"Client", "AsyncClient", "HTTPTransport"}
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "httpx"
            ):
                makers.append(path.name)
    assert others == []
    assert set(makers) == {"http_client.py"}


def _loopback_server(host: str) -> RawServer:
    if host == "::1":
        try:
            return RawServer([send(OK)], host="::1")
        except OSError:
            pytest.skip("no IPv6 loopback on this machine")
    return RawServer([send(OK)], host="127.5.6.7" if host == "127.5.6.7" else "127.0.0.1")


@pytest.mark.usefixtures("dead_proxy")
@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.6.7", "localhost", "::1"])
def test_a_loopback_server_is_reached_directly_whatever_the_proxies(host: str) -> None:
    server = _loopback_server(host)
    try:
        netloc = f"[{host}]" if ":" in host else host
        url = f"http://{netloc}:{server.port}/v1/models"
        for client in (shared_client(url), new_client(url, follow_redirects=True)):
            assert client.get(url).json() == {"ok": True}
    finally:
        server.close()


def test_a_remote_server_goes_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy is a loopback server that answers itself: the request it got names the
    remote server (in absolute form), and nothing went to that server."""
    proxy = RawServer([send(OK)])
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    try:
        url = "http://192.0.2.1/v1/models"
        for client in (shared_client(url), new_client(url, follow_redirects=True)):
            assert client.get(url, timeout=5).json() == {"ok": True}
    finally:
        proxy.close()
    assert [r.split(b"\r\n")[0] for r in proxy.requests] == [
        b"GET http://192.0.2.1/v1/models HTTP/1.1"
    ] * 2


def test_the_ipv6_loopback_is_never_sent_to_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy that would answer anything: a request to [::1] never reaches it, whether or
    not this machine has an IPv6 loopback to answer it directly."""
    import httpx

    proxy = RawServer([send(OK)])
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
    for name in ("NO_PROXY", "no_proxy", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]  # nothing listens on it, on either loopback
        for scheme in ("http", "https"):
            url = f"{scheme}://[::1]:{port}/v1/models"
            for client in (shared_client(url), new_client(url, follow_redirects=True)):
                with pytest.raises(httpx.ConnectError):
                    client.get(url, timeout=5)
    finally:
        proxy.close()
    assert proxy.requests == []


_EXIT_WHILE_LOADING = """
import atexit, sys, threading
from seri.io.provider.http_client import load_in_background

def after_threads() -> None:
    loading = [t for t in threading.enumerate() if t.name == "seri-httpx-import"]
    print("still importing" if loading else "imported", "httpx" in sys.modules)

atexit.register(after_threads)
load_in_background()
sys.exit(2)
"""


def test_a_command_that_ends_at_once_waits_for_the_background_import() -> None:
    """The interpreter is not torn down under a thread still importing httpx (a daemon one
    could be, and seri died of SIGSEGV in sem_wait): by the time atexit runs, it has ended."""
    done = subprocess.run(
        [sys.executable, "-c", _EXIT_WHILE_LOADING],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (2, "imported True\n", "")
