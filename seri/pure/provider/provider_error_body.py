"""What a provider's error body says, whatever its shape: every string and machine-readable code
in it (``Evidence``, nested JSON text included), its error object, the provider's own words
(``provider_message``), and anything key-shaped scrubbed from it (``redact``)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from seri.pure.inputs import json_text
from seri.pure.inputs.lazy_pattern import LazyPattern

# How much of a provider's message a person is shown.
_MESSAGE_LIMIT = 300


# --- secrets ---------------------------------------------------------------------------------

# Anything shaped like a bearer token or an ``sk-`` key, whoever's it is: a provider that echoes
# "Incorrect API key provided: sk-..." must not get the key into a terminal or a transcript.
_KEYLIKE = LazyPattern(r"\bsk-[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+[A-Za-z0-9_\-.~+/=]{6,}")


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """``text`` with every given secret, and anything key-shaped, replaced by ``[redacted]``."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _KEYLIKE.sub("[redacted]", text)


# --- reading error bodies --------------------------------------------------------------------


def parsed_json(text: str) -> object:
    try:
        return json_text.loads(text)
    except ValueError:
        return None


@attrs.frozen
class Evidence:
    """Every string of an error body, and the machine-readable codes, gathered recursively."""

    texts: tuple[str, ...]
    markers: frozenset[str]


def _gather(value: object, texts: list[str], markers: set[str], depth: int = 0) -> None:
    # metadata.raw is often the upstream body as a JSON string, sometimes nested twice.
    if depth > 6:
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in ("code", "type", "error_type", "limit_source") and isinstance(
                item, str | int
            ):
                markers.add(str(item).lower())
            if key == "excluded_by" and isinstance(item, list):
                markers.update(f"excluded_by:{x}" for x in item if isinstance(x, str))
            if key == "constraint" and isinstance(item, Mapping):
                field = item.get("field")
                if isinstance(field, str):
                    markers.add(f"excluded_by:{field}")
            _gather(item, texts, markers, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _gather(item, texts, markers, depth + 1)
    elif isinstance(value, str):
        texts.append(value)
        stripped = value.strip()
        if stripped[:1] in ("{", "["):
            parsed = parsed_json(stripped)
            if parsed is not None:
                _gather(parsed, texts, markers, depth + 1)


def evidence_of(body: object) -> Evidence:
    texts: list[str] = []
    markers: set[str] = set()
    if isinstance(body, str):
        parsed = parsed_json(body)
        if parsed is None:
            texts.append(body)
        else:
            _gather(parsed, texts, markers)
    else:
        _gather(body, texts, markers)
    return Evidence(tuple(texts), frozenset(markers))


# --- the provider's own words ----------------------------------------------------------------


def shortened(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_object(body: object) -> Mapping[str, object]:
    if isinstance(body, Mapping):
        inner = body.get("error")
        if isinstance(inner, Mapping):
            return inner
        return body
    return {}


def _raw_message(raw: object) -> str:
    """The upstream message inside ``metadata.raw``, which may be JSON text or an object."""
    if isinstance(raw, str):
        parsed = parsed_json(raw)
        if parsed is None:
            return raw
        raw = parsed
    error = error_object(raw)
    message = error.get("message")
    return message if isinstance(message, str) else ""


def provider_message(body: object) -> str:
    """What the provider said, from an error body or error object (``""`` if it said nothing)."""
    if isinstance(body, str):
        parsed = parsed_json(body)
        if parsed is None:
            return shortened(body)
        body = parsed
    error = error_object(body)
    message = error.get("message")
    said = message if isinstance(message, str) else ""
    metadata = error.get("metadata")
    if isinstance(metadata, Mapping):
        upstream = _raw_message(metadata.get("raw"))
        name = metadata.get("provider_name")
        if upstream and upstream not in said:
            who = f"{name}: " if isinstance(name, str) and name else ""
            said = f"{said} ({who}{upstream})" if said else f"{who}{upstream}"
        reasons = metadata.get("reasons")
        if isinstance(reasons, list) and reasons:
            said = f"{said} (reasons: {', '.join(str(r) for r in reasons)})"
    return shortened(said)
