"""The environment an MCP server program starts with: seri's, minus its secrets, plus its own.

A server is somebody else's program. It gets what a program needs to run (``PATH``, ``HOME``,
the locale, proxy and certificate settings) but not seri's API key nor anything else that
looks like a credential: variables whose names say key, token, secret, password, credential or
auth; values shaped like a well-known key; URLs with a password in them; and any variable
whose value holds a secret seri knows (the API key under an innocent name). gemini-cli strips
such variables the same way (``docs/tools/mcp-server.md``); Codex and the official SDKs go
further and pass only a short allowlist, which breaks servers behind a proxy or a private CA.

What the server's entry sets in ``env`` is added last and always wins: naming a variable there
is how a person hands a server the one token it needs (``"GITHUB_TOKEN": "${GITHUB_TOKEN}"``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import attrs

from seri.pure.trajectories.redaction import Redactor

# Name parts (split at _ - .) that mark a credential. A part ending in one counts too
# (PGPASSWORD, APIKEY); AUTHOR (GIT_AUTHOR_NAME) is a name, not a credential.
_SECRET_PART_ENDINGS = (
    "KEY",
    "KEYS",
    "TOKEN",
    "TOKENS",
    "SECRET",
    "SECRETS",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "COOKIE",
    "COOKIES",
)
_SECRET_PART_STARTS = ("AUTH",)
_NOT_SECRET_PARTS = frozenset({"AUTHOR", "AUTHORS", "MONKEY", "HOTKEY", "HOTKEYS"})
# seri's own settings are none of a server's business (and SERI_API_KEY is the key).
_OWN_PREFIX = "SERI_"
_NAME_PARTS = re.compile(r"[_\-.]+")
# scheme://user:password@host
_URL_WITH_PASSWORD = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@")


@attrs.frozen
class ServerEnvironment:
    """The variables to start the server with, and the names held back (for diagnostics)."""

    variables: tuple[tuple[str, str], ...]
    withheld: tuple[str, ...]

    def as_dict(self) -> dict[str, str]:
        return dict(self.variables)


def is_credential_name(name: str) -> bool:
    """Whether a variable's name says it holds a credential."""
    if name.upper().startswith(_OWN_PREFIX):
        return True
    for part in _NAME_PARTS.split(name.upper()):
        if not part or part in _NOT_SECRET_PARTS:
            continue
        if part.endswith(_SECRET_PART_ENDINGS) or part.startswith(_SECRET_PART_STARTS):
            return True
    return False


def holds_credential(value: str, redactor: Redactor) -> bool:
    """Whether a value carries a known secret, a key-shaped string or a URL with a password."""
    return bool(_URL_WITH_PASSWORD.search(value)) or redactor.text(value) != value


def server_environment(
    parent: Mapping[str, str],
    configured: Iterable[tuple[str, str]],
    known_secrets: Iterable[str] = (),
) -> ServerEnvironment:
    """``parent`` without credentials, then the entry's own ``configured`` variables on top."""
    redactor = Redactor.of(known_secrets)
    kept: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in parent.items():
        if is_credential_name(name) or holds_credential(value, redactor):
            withheld.append(name)
        else:
            kept[name] = value
    own = dict(configured)
    kept.update(own)
    return ServerEnvironment(
        variables=tuple(kept.items()),
        withheld=tuple(sorted(name for name in withheld if name not in own)),
    )
