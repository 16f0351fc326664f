"""The two eras of MCP, and how a client tells which one a server speaks.

*Handshake* revisions (2024-11-05 to 2025-11-25) open with ``initialize`` and
``notifications/initialized``; over HTTP the server may then hand out an ``Mcp-Session-Id``.
The *stateless* revision 2026-07-28 has no handshake: every request carries the protocol
version and the client's capabilities in ``params._meta``, and over HTTP also the
``MCP-Protocol-Version``, ``Mcp-Method`` and ``Mcp-Name`` headers (spec
``basic/versioning.mdx`` and ``basic/transports/streamable-http.mdx`` @2026-07-28).

A client that speaks both probes first with ``server/discover`` at the modern version. A
``DiscoverResult`` means a modern server. A *modern* error (``-32020`` to ``-32022``) means a
modern server too: retry at a version it lists, or give up if it lists none seri speaks.
Anything else (``Method not found``, ``Server not initialized``, an HTTP 400 without a modern
body, silence until a short timeout) means a handshake server: fall back to ``initialize``.
The fallback is never keyed to one error code, since legacy servers answer a request before
the handshake in many ways. Should ``initialize`` itself come back ``-32022`` naming a modern
version (a slow modern server that answered the probe after it timed out), that is modern
evidence too, and the probe is repeated once.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from seri.pure.mcp.jsonrpc import ErrorResponse, Response

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
LATEST_HANDSHAKE = HANDSHAKE_VERSIONS[-1]
LATEST_MODERN = MODERN_VERSIONS[-1]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT = "io.modelcontextprotocol/clientInfo"
META_SERVER = "io.modelcontextprotocol/serverInfo"

HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
MODERN_ERRORS = frozenset({HEADER_MISMATCH, MISSING_CAPABILITY, UNSUPPORTED_VERSION})

LEGACY = "legacy"
MODERN = "modern"
CLIENT_NAME = "seri"
# Over HTTP, a header value outside visible ASCII goes as base64 between these markers.
_B64_OPEN, _B64_CLOSE = "=?base64?", "?="


@attrs.frozen
class ServerInfo:
    """What a server said about itself once the era was settled."""

    era: str
    version: str
    name: str = ""
    server_version: str = ""
    instructions: str = ""
    capabilities: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class FallBack:
    """Not a modern server: open with ``initialize``."""

    reason: str


@attrs.frozen
class Retry:
    """A modern server that wants another modern version: probe again with it."""

    version: str


@attrs.frozen
class Incompatible:
    """The server and seri share no protocol version, or the server refused seri outright."""

    message: str


Verdict = ServerInfo | FallBack | Retry | Incompatible


def client_info(client_version: str) -> dict[str, str]:
    return {"name": CLIENT_NAME, "version": client_version}


def initialize_params(client_version: str, version: str = LATEST_HANDSHAKE) -> dict[str, Any]:
    """The ``initialize`` request's params. seri asks for no client capabilities: it answers
    no sampling, elicitation or roots requests, so it does not offer them."""
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": client_info(client_version),
    }


def modern_params(
    params: Mapping[str, Any] | None, version: str, client_version: str
) -> dict[str, Any]:
    """``params`` with the ``_meta`` every modern request must carry (any ``_meta`` kept)."""
    merged = dict(params or {})
    meta = dict(merged.get("_meta") or {})
    meta[META_VERSION] = version
    meta[META_CAPABILITIES] = {}
    meta[META_CLIENT] = client_info(client_version)
    merged["_meta"] = meta
    return merged


def read_initialize(result: Mapping[str, Any]) -> ServerInfo | Incompatible:
    """The server's answer to ``initialize``: its version must be one seri speaks."""
    version = result.get("protocolVersion")
    if not isinstance(version, str) or version not in HANDSHAKE_VERSIONS:
        return Incompatible(
            f"the server answered initialize with protocol version {version!r}; seri speaks "
            f"{', '.join(HANDSHAKE_VERSIONS + MODERN_VERSIONS)}"
        )
    return _server_info(LEGACY, version, _mapping(result.get("serverInfo")), result)


def read_discover(answer: Response | ErrorResponse | None, asked: str) -> Verdict:
    """What the ``server/discover`` probe at version ``asked`` showed (``None``: no answer)."""
    if answer is None:
        return FallBack("no answer to server/discover")
    if isinstance(answer, ErrorResponse):
        return _discover_error(answer, asked)
    result = answer.result
    supported = _versions(result.get("supportedVersions"))
    if supported is None or "capabilities" not in result:
        return FallBack("server/discover answered with something that is not a DiscoverResult")
    if asked in supported:
        version = asked
    else:
        mutual = [v for v in MODERN_VERSIONS if v in supported]
        if not mutual:
            if any(v in HANDSHAKE_VERSIONS for v in supported):
                return FallBack("the server lists only handshake versions")
            return _no_mutual(supported)
        return Retry(mutual[-1])
    info = _mapping(_mapping(result.get("_meta")).get(META_SERVER))
    return _server_info(MODERN, version, info, result)


def _server_info(
    era: str, version: str, info: Mapping[str, Any], result: Mapping[str, Any]
) -> ServerInfo:
    """The server's self-description: ``info`` is ``serverInfo`` (handshake) or the
    ``_meta`` entry of the same name (stateless)."""
    return ServerInfo(
        era=era,
        version=version,
        name=_text(info.get("name")),
        server_version=_text(info.get("version")),
        instructions=_text(result.get("instructions")),
        capabilities=_mapping(result.get("capabilities")),
    )


def read_initialize_error(error: ErrorResponse, already_retried: bool) -> Retry | Incompatible:
    """``initialize`` was refused. A ``-32022`` naming a modern version is modern evidence:
    probe once more at that version. Anything else ends the connection attempt."""
    if error.code == UNSUPPORTED_VERSION and not already_retried:
        supported = _versions(_mapping(error.data).get("supported")) or ()
        mutual = [v for v in MODERN_VERSIONS if v in supported]
        if mutual:
            return Retry(mutual[-1])
    return Incompatible(f"the server refused initialize: {error.message} (code {error.code})")


def _discover_error(error: ErrorResponse, asked: str) -> Verdict:
    if error.code not in MODERN_ERRORS:
        return FallBack(f"server/discover failed: {error.message} (code {error.code})")
    if error.code != UNSUPPORTED_VERSION:
        return Incompatible(f"the server refused seri's request: {error.message}")
    supported = _versions(_mapping(error.data).get("supported"))
    if supported is None:
        return FallBack("an unsupported-version error without a list of versions")
    mutual = [v for v in MODERN_VERSIONS if v in supported and v != asked]
    if mutual:
        return Retry(mutual[-1])
    if any(v in HANDSHAKE_VERSIONS for v in supported):
        return FallBack("the server lists handshake versions")
    return _no_mutual(supported)


def _no_mutual(supported: Sequence[str]) -> Incompatible:
    return Incompatible(
        f"the server speaks protocol versions {', '.join(supported) or '(none listed)'}; seri "
        f"speaks {', '.join(HANDSHAKE_VERSIONS + MODERN_VERSIONS)}"
    )


def result_type(result: Mapping[str, Any]) -> str:
    """A modern result's ``resultType``; absent means ``complete`` (older servers)."""
    kind = result.get("resultType")
    return kind if isinstance(kind, str) else "complete"


# --- HTTP headers ---------------------------------------------------------------------------


def encode_header_value(value: str) -> str:
    """``value`` as a header value: as is when it is plain visible ASCII, else the base64
    sentinel form (also for a plain value that looks like the sentinel itself)."""
    plain = (
        value == value.strip(" \t")
        and all(0x20 <= ord(ch) <= 0x7E or ch == "\t" for ch in value)
        and not (value.startswith(_B64_OPEN) and value.endswith(_B64_CLOSE))
    )
    if plain:
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{_B64_OPEN}{encoded}{_B64_CLOSE}"


def decode_header_value(value: str) -> str:
    """The inverse of ``encode_header_value``."""
    if value.startswith(_B64_OPEN) and value.endswith(_B64_CLOSE):
        inner = value[len(_B64_OPEN) : len(value) - len(_B64_CLOSE)]
        return base64.b64decode(inner).decode("utf-8")
    return value


def modern_headers(
    method: str, params: Mapping[str, Any], version: str
) -> tuple[tuple[str, str], ...]:
    """The request-metadata headers of a modern POST (``Mcp-Param-*`` come from the tool)."""
    headers = [("MCP-Protocol-Version", version), ("Mcp-Method", method)]
    name = params.get("name") if method in ("tools/call", "prompts/get") else None
    if method == "resources/read":
        name = params.get("uri")
    if isinstance(name, str):
        headers.append(("Mcp-Name", encode_header_value(name)))
    return tuple(headers)


def _versions(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return tuple(value)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
