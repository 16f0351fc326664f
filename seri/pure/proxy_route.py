"""Which proxy, if any, a request goes through: the environment's variables read the way
httpx (``trust_env``), curl and requests read them, so a setting that worked before works now.

* ``https_proxy``/``HTTPS_PROXY`` for https, ``http_proxy``/``HTTP_PROXY`` for http (not the
  upper-case one under CGI, where ``HTTP_PROXY`` is a request header: "httpoxy"), then
  ``all_proxy``/``ALL_PROXY``; the lower-case spelling wins, an empty value is no value.
* ``no_proxy``/``NO_PROXY``: ``*`` (every host), host names (``example.com`` also covers its
  subdomains; ``.example.com`` and ``*.example.com`` the same), IP addresses, each optionally
  with ``:port``; entries separated by commas or spaces.
* A loopback server (``localhost``, ``127.x.x.x``, ``::1``) never goes through a proxy, which
  could not reach it.

Pure: the caller hands in the environment as a mapping.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

LOOPBACK_NAMES = frozenset({"localhost", "::1"})


@attrs.frozen
class ProxyChoice:
    """The proxy's URL as written and the variable that named it (for messages)."""

    variable: str
    url: str


def normal_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def is_loopback(host: str) -> bool:
    name = normal_host(host)
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    parts = name.split(".")
    return len(parts) == 4 and parts[0] == "127" and all(p.isdigit() for p in parts)


def _first_set(environ: Mapping[str, str], names: tuple[str, ...]) -> ProxyChoice | None:
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return ProxyChoice(variable=name, url=value)
    return None


def _bypassed(no_proxy: str, host: str, port: int) -> bool:
    for raw in no_proxy.replace(",", " ").split():
        entry = raw.lower().partition("://")[2] or raw.lower()
        if entry == "*":
            return True
        name, wanted_port = entry, ""
        if entry.startswith("["):  # [::1]:8080
            name, _, rest = entry[1:].partition("]")
            wanted_port = rest.removeprefix(":")
        elif entry.count(":") == 1:
            name, _, wanted_port = entry.partition(":")
        if wanted_port and wanted_port != str(port):
            continue
        name = normal_host(name.removeprefix("*").removeprefix("."))
        if name and (host == name or host.endswith(f".{name}")):
            return True
    return False


def proxy_for(environ: Mapping[str, str], scheme: str, host: str, port: int) -> ProxyChoice | None:
    """The proxy for a request to ``scheme://host:port``, or ``None`` to go direct."""
    name = normal_host(host)
    if is_loopback(name):
        return None
    no_proxy = _first_set(environ, ("no_proxy", "NO_PROXY"))
    if no_proxy is not None and _bypassed(no_proxy.url, name, port):
        return None
    if scheme == "https":
        names: tuple[str, ...] = ("https_proxy", "HTTPS_PROXY")
    elif "REQUEST_METHOD" in environ:
        names = ("http_proxy",)
    else:
        names = ("http_proxy", "HTTP_PROXY")
    return _first_set(environ, (*names, "all_proxy", "ALL_PROXY"))
