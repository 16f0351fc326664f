"""The process's httpx clients: the provider's calls and the OTLP sender's posts go through
them (MCP over HTTP makes its own with the same rules, since it follows redirects).

httpx as it is meant to be used:

* one ``httpx.Client`` per process and way of talking, made on first use and kept, so its
  connections are kept alive across calls (the window lookup's ``GET /models`` and the first
  chat request share one; so do the turns of a run). Idle connections are kept for a minute,
  not httpx's 5 s: a turn's tools often run longer than that between two calls, and a
  connection the server closed meanwhile is noticed by httpcore before it is used;
* ``trust_env=True``: ``HTTP(S)_PROXY``, ``ALL_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR`` work as httpx documents them. One addition: a loopback server
  (``seri.pure.provider.local_hosts``) never goes through a proxy, which could not reach it;
* redirects are not followed (the provider and a collector answer where they are asked),
  nothing retries underneath the caller, and timeouts are ``httpx.Timeout`` per request.

A client is made for the environment it was made in: a test (or a caller) that changes
``SSL_CERT_FILE`` or a proxy variable gets a new one. Plain http to a loopback server never
does TLS, so its client loads no CA bundle (~15 ms of a start).

httpx costs ~55 ms to import: this module imports it only when a client is made, and
``load_in_background`` lets a command start that import while it does other work.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from seri.pure.provider.local_hosts import is_loopback

if TYPE_CHECKING:
    import httpx

# The variables httpx reads with trust_env (proxies, CAs, netrc): a client is made per set.
_ENVIRONMENT_WORDS = ("proxy", "ssl_cert", "netrc", "request_method")
# Loopback names httpx's mount patterns can say; another 127.x.x.x is added per client.
_LOOPBACK_PATTERNS = ("all://localhost", "all://*.localhost", "all://127.0.0.1", "all://[::1]")
KEEPALIVE_SECONDS = 60.0

_lock = threading.Lock()
_clients: dict[tuple[object, ...], httpx.Client] = {}


def shared_client(url: str) -> httpx.Client:
    """The process's client for requests to ``url``'s server (redirects not followed)."""
    host, plain_loopback = _server_of(url)
    environment = tuple(
        sorted(
            (name, value)
            for name, value in os.environ.items()
            if any(word in name.lower() for word in _ENVIRONMENT_WORDS)
        )
    )
    key = (plain_loopback, _extra_loopback(host), environment)
    with _lock:
        client = _clients.get(key)
        if client is None or client.is_closed:
            client = _clients[key] = _made(host, tls=not plain_loopback, follow_redirects=False)
        return client


def new_client(url: str, *, follow_redirects: bool = False) -> httpx.Client:
    """A client of its own for ``url``'s server, with seri's rules (see the top); the caller
    closes it. Raises ``OSError`` (a CA file that cannot be read) or ``ImportError`` (a SOCKS
    proxy without httpx's extra)."""
    host, _ = _server_of(url)
    return _made(host, tls=True, follow_redirects=follow_redirects)


def _server_of(url: str) -> tuple[str, bool]:
    """The URL's host, and whether it is a loopback server asked in plain http (which never
    needs TLS: no proxy is used for it, and redirects are not followed)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    return host, is_loopback(host) and parts.scheme == "http"


def _extra_loopback(host: str) -> str:
    """A loopback host that the fixed patterns do not name (127.5.6.7), or ``""``."""
    named = f"[{host}]" if ":" in host else host
    if not is_loopback(host) or f"all://{named}" in _LOOPBACK_PATTERNS:
        return ""
    return named


def _made(host: str, *, tls: bool, follow_redirects: bool) -> httpx.Client:
    import httpx

    extra = _extra_loopback(host)
    patterns = (*_LOOPBACK_PATTERNS, f"all://{extra}") if extra else _LOOPBACK_PATTERNS
    return httpx.Client(
        trust_env=True,
        verify=tls,
        follow_redirects=follow_redirects,
        mounts=dict.fromkeys(patterns),
        limits=httpx.Limits(keepalive_expiry=KEEPALIVE_SECONDS),
    )


def load_in_background() -> None:
    """Start importing httpx (what its clients need, and what reads an answer) in a thread of
    its own: a command that will talk to the provider does its other start-up work meanwhile.

    Not a daemon: the interpreter waits for it before it shuts down. A daemon thread still
    importing when a command ends at once (a goal's check refused by a rule, exit 2) can
    meet the import machinery torn down: seri died of SIGSEGV in ``sem_wait`` that way."""
    threading.Thread(target=_load, name="seri-httpx-import", daemon=False).start()


def _load() -> None:
    # Only what the request needs: the modules that read an answer (SSE, assembly, errors,
    # retries) are imported once one arrives, so that their import does not share the
    # interpreter with the session's opening before the request's first byte is out.
    import httpx  # noqa: F401
