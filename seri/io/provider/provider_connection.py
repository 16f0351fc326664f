"""How a request reaches the provider: its URLs, the API key, the timeouts and the client.

The key goes in one request header and nowhere else: it shows as ``[redacted]`` in any repr,
and whatever httpx says of a failure is scrubbed of it. The connections belong to the process's
httpx client (``seri.io.provider.http_client``: keep-alive, proxies and CAs from the environment); a
CA file that cannot be read or a proxy httpx cannot use is said as a connection failure
(``NoClient``). ``seri.io.provider.provider`` sends the chat requests over this, and asks its JSON
questions (``GET /models`` and the like) through ``json_answer``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from seri.io.provider.http_client import shared_client
from seri.pure.inputs import json_text

WRITE_SECONDS = 60.0
JSON_HEADERS = {"Content-Type": "application/json"}


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


class ProviderConnection:
    """The server at ``base_url``, reached with ``api_key`` (none for a local server that
    wants none), naming seri as ``referer`` and ``title`` to OpenRouter."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        connect_timeout: float,
        referer: str = "",
        title: str = "",
    ) -> None:
        _check_key(api_key)
        self._base_url = base_url.rstrip("/")
        self._api_key = _Secret(api_key)
        self.connect_timeout = connect_timeout
        self._referer = referer
        self._title = title

    def __repr__(self) -> str:
        return f"ProviderConnection(base_url={self._base_url!r}, api_key=[redacted])"

    @property
    def base_url(self) -> str:
        return self._base_url

    def url(self, path: str) -> str:
        return f"{self._base_url}/{path}"

    def server_url(self, path: str) -> str:
        """A path at the server's root: llama.cpp and Ollama serve /props and /api/show there,
        beside (not under) their OpenAI-compatible ``/v1``."""
        root = self._base_url.removesuffix("/v1")
        return f"{root}/{path}"

    def headers(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        # No key (a local server that wants none): no Authorization header at all.
        headers = {"User-Agent": "seri"}
        if self._api_key.value:
            headers["Authorization"] = f"Bearer {self._api_key.value}"
        if self._referer:
            headers["HTTP-Referer"] = self._referer
        if self._title:
            headers["X-Title"] = headers["X-OpenRouter-Title"] = self._title
        return {**headers, **(extra or {})}

    def timeout(self, read: float) -> httpx.Timeout:
        return httpx.Timeout(
            connect=self.connect_timeout,
            read=read,
            write=WRITE_SECONDS,
            pool=self.connect_timeout,
        )

    @property
    def secrets(self) -> tuple[str]:
        """What no message may show: the key."""
        return (self._api_key.value,)

    def scrub(self, text: str) -> str:
        from seri.pure.provider.provider_error_body import redact

        return redact(text, self.secrets)

    def said(self, exc: Exception) -> str:
        """What went wrong, in httpx's words (which name no header, URL or key; scrubbed of
        the key all the same), with advice for a certificate that does not verify."""
        said = self.scrub(str(exc)) or type(exc).__name__
        if "CERTIFICATE_VERIFY_FAILED" in said:
            said += "; if your network inspects TLS, point SSL_CERT_FILE at its CA bundle"
        return said

    def client(self) -> httpx.Client:
        """The process's client for this server; a CA file that cannot be read or a proxy
        httpx cannot use is said as a connection failure (``NoClient``)."""
        try:
            return shared_client(self._base_url)
        except OSError as exc:
            raise NoClient(_unreadable_cas(exc)) from None
        except (ImportError, ValueError) as exc:
            # A SOCKS proxy without httpx's extra, a proxy URL httpx cannot read (httpx
            # shows a URL's password as [secure]).
            raise NoClient(f"the proxy in the environment cannot be used: {exc}") from None

    def json_answer(
        self, method: str, url: str, body: Mapping[str, Any] | None, *, read_timeout: float
    ) -> Any:
        """The JSON of a 200 answer; ``None`` for anything else, whatever went wrong."""
        content, extra = (None, None) if body is None else (encoded(body), JSON_HEADERS)
        try:
            with self.client().stream(
                method,
                url,
                content=content,
                headers=self.headers(extra),
                timeout=self.timeout(read_timeout),
            ) as response:
                if response.status_code != 200:
                    return None
                from seri.io.provider.provider_stream import bounded_body

                return json_text.loads_lenient_numbers(bounded_body(response))
        except (httpx.HTTPError, httpx.InvalidURL, NoClient, ValueError):
            return None


class NoClient(Exception):
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


def encoded(body: Mapping[str, Any] | bytes) -> bytes:
    if isinstance(body, bytes):
        return body
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
