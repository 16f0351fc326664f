"""Keeping secrets out of everything seri writes down, and large values out of recordings.

Secrets are the API key, the values of environment variables whose names look
like keys or tokens, and anything shaped like a well-known key or an
Authorization header. They are replaced before a value reaches the database, a
trajectory, a log or an error message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

REDACTED = "[REDACTED]"
# Values shorter than this are too likely to be ordinary words to replace everywhere.
MIN_SECRET_LENGTH = 8

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_SECRET_SHAPES = re.compile(
    r"sk-or-v1-[0-9A-Za-z]{16,}"
    r"|sk-ant-[0-9A-Za-z_\-]{16,}"
    r"|sk-(?:proj-)?[0-9A-Za-z_\-]{20,}"
    r"|gh[pousr]_[0-9A-Za-z]{20,}"
    r"|xox[abprs]-[0-9A-Za-z\-]{10,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|(?i:bearer)\s+[0-9A-Za-z._~+/=\-]{8,}"
    r"|(?i:authorization)[\"']?\s*[:=]\s*[\"']?[^\s\"',}]{8,}"
)


# Dotenv and shell assignments (`DB_PASSWORD=hunter2`, `export API_TOKEN='x'`): the name says
# the value is secret. Only the tight NAME=value form, so that source code the model reads
# (`SECRET_KEY = os.environ[...]`) stays as it is and its edits still match.
_SECRET_ASSIGNMENT = re.compile(
    r"(?m)(?<![\w.])((?:[A-Z][A-Z0-9]*_)*"
    r"(?:APIKEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)"
    r"(?:_[A-Z0-9]+)*=)([\"']?)([^\s\"'#]{4,})\2"
)


def secrets_from_environment(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of variables whose names say they are secret, longest first."""
    values = {
        value
        for name, value in env.items()
        if _SECRET_NAME.search(name) and len(value) >= MIN_SECRET_LENGTH
    }
    return tuple(sorted(values, key=len, reverse=True))


@attrs.frozen
class Redactor:
    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, secrets: Iterable[str]) -> Redactor:
        kept = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
        return cls(tuple(sorted(kept, key=len, reverse=True)))

    def text(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        text = _SECRET_ASSIGNMENT.sub(lambda m: m[1] + m[2] + REDACTED + m[2], text)
        return _SECRET_SHAPES.sub(REDACTED, text)

    def value(self, value: Any) -> Any:
        """Redact every string in a JSON-like value, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value


def elided(original_bytes: int) -> dict[str, Any]:
    return {"elided": True, "originalBytes": original_bytes}


def elide_large(value: Any, limit: int) -> Any:
    """Replace every string longer than ``limit`` UTF-8 bytes by an elision marker."""
    if isinstance(value, str):
        size = len(value.encode("utf-8", "replace"))
        return elided(size) if size > limit else value
    if isinstance(value, Mapping):
        return {k: elide_large(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [elide_large(item, limit) for item in value]
    return value


def elide_json_text(text: str, limit: int) -> Any:
    """A JSON text (tool arguments) as a value with its large strings elided."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return elide_large(text, limit)
    return elide_large(value, limit)
