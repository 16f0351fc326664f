"""Which host names mean this machine: what never goes through a proxy (one could not reach
it) and what counts as a model server at home (``seri.pure.provider.answer_wait``,
``seri.runtime.terminal.chat_options``).

Pure: names in, answers out.
"""

from __future__ import annotations

LOOPBACK_NAMES = frozenset({"localhost", "::1"})


def normal_host(host: str) -> str:
    """A host as compared: no brackets around an IPv6 address, no final dot, lower case."""
    return host.strip().rstrip(".").strip("[]").rstrip(".").lower()


def is_loopback(host: str) -> bool:
    """``localhost`` (and its subdomains), ``::1`` and every ``127.x.x.x``."""
    name = normal_host(host)
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    parts = name.split(".")
    return len(parts) == 4 and parts[0] == "127" and all(p.isdigit() for p in parts)
