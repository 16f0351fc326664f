"""Keeping secrets out of everything seri writes down, and large values out of recordings.

Secrets are the API key, the values of environment variables whose names look
like keys or tokens, and anything shaped like a well-known key or an
Authorization header. They are replaced before a value reaches the database, a
trajectory, a log or an error message.

Right-sized: also ``Authorization: Basic …``, the password of ``scheme://user:pw@host``,
``password`` in ``.netrc`` lines, YAML ``password: value`` and INI ``password = value``
lines, and PEM private key blocks; but not what only sounds secret. A variable named like
``SSH_AUTH_SOCK`` or ``DBUS_SESSION_BUS_ADDRESS`` holds a path or an address, and a path
is not redacted (``PWD=/home/me``): replacing it everywhere would corrupt the files the
model reads and then rewrites.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

REDACTED = "[REDACTED]"
# Values shorter than this are too likely to be ordinary words to replace everywhere.
MIN_SECRET_LENGTH = 8

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
# Names that end like these hold where something is, not a secret.
_PLACE_SUFFIX = re.compile(
    r"_(?:SOCK|SOCKET|ADDRESS|ADDR|PATH|DIR|FILE|HOST|PORT|ID|TYPE|MODE|NAME|URL)$",
    re.IGNORECASE,
)
_SECRET_SHAPES = re.compile(
    r"sk-or-v1-[0-9A-Za-z]{16,}"
    r"|sk-ant-[0-9A-Za-z_\-]{16,}"
    r"|sk-(?:proj-)?[0-9A-Za-z_\-]{20,}"
    r"|gh[pousr]_[0-9A-Za-z]{20,}"
    r"|xox[abprs]-[0-9A-Za-z\-]{10,}"
    r"|AKIA[0-9A-Z]{16}"
    r"|(?i:bearer)\s+[0-9A-Za-z._~+/=\-]{8,}"
    r"|(?i:authorization)[\"']?\s*[:=]\s*[\"']?(?:(?i:basic|digest|token)\s+)?[^\s\"',}]{8,}"
    r"|-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
)
# Literals every match of _SECRET_SHAPES holds one of. The case-blind words are looked for
# in the lowered text: only B/b, E/e, A/a, R/r, U/u, T/t, H/h, O/o match those letters under
# re's IGNORECASE ("authorization"'s i would also match the Turkish dotted and dotless I,
# hence its prefix alone).
_SHAPE_LITERALS = ("sk-", "xox", "AKIA", "-----BEGIN ")
_SHAPE_WORDS = ("bearer", "author")
_GITHUB_PREFIX = re.compile(r"gh[pousr]_")


def _may_hold_a_shape(text: str) -> bool:
    """False only where ``_SECRET_SHAPES`` cannot match (it need not run)."""
    if any(literal in text for literal in _SHAPE_LITERALS) or _GITHUB_PREFIX.search(text):
        return True
    lowered = text.lower()
    return any(word in lowered for word in _SHAPE_WORDS)


# scheme://user:password@host: the password goes, the rest (where it points) stays.
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@\\\"'<>]+:)([^\s/@\\\"'<>]+)(@)")
# .netrc: `machine h login u password p` (on one line or several). Line-anchored patterns
# allow read_file's line numbers (`     3<TAB>`) in front.
_NETRC_PASSWORD = re.compile(
    r"(?m)^((?:[ \t]*\d+\t)?[ \t]*(?:(?:machine|default)\b[^\n]*?)?"
    r"(?:\blogin[ \t]+\S+[ \t]+)?password[ \t]+)(\S+)"
)
# YAML `password: value` and INI `password = value` lines; a value that is a type, a
# reference or empty (`password: str`, `password = os.environ[...]`) is code, not a secret.
_CONFIG_PASSWORD = re.compile(
    r"(?im)^((?:[ \t]*\d+\t)?[ \t]*[\w.\-]*(?:password|passwd|passphrase|secret)[\w.\-]*"
    r"[ \t]*[:=][ \t]*)"
    r"([\"']?)([^\s\"'#()\[\]{}]{4,})\2[ \t]*(?:[#;].*)?$"
)
_NOT_A_VALUE = frozenset(
    {
        "none",
        "null",
        "true",
        "false",
        "str",
        "string",
        "bytes",
        "secretstr",
        "optional",
        "required",
        "redacted",
        "[redacted]",
        "changeme",
        "password",
    }
)


# Dotenv and shell assignments (`DB_PASSWORD=hunter2`, `export API_TOKEN='x'`): the name says
# the value is secret. Only the tight NAME=value form, so that source code the model reads
# (`SECRET_KEY = os.environ[...]`) stays as it is and its edits still match.
_SECRET_ASSIGNMENT = re.compile(
    r"(?m)(?<![\w.])((?:[A-Z][A-Z0-9]*_)*"
    r"(?:APIKEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)"
    r"(?:_[A-Z0-9]+)*(?<!_SOCK)(?<!_SOCKET)(?<!_ADDRESS)(?<!_PATH)(?<!_DIR)(?<!_FILE)"
    r"(?<!_HOST)(?<!_PORT)(?<!_URL)=)([\"']?)(?!/|~/|\./|unix:|tcp:)([^\s\"'#]{4,})\2"
)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is secret."""
    return bool(_SECRET_NAME.search(name)) and not _PLACE_SUFFIX.search(name)


def _looks_like_place(value: str) -> bool:
    """A path or a socket address: not a secret, whatever the variable is called."""
    return value.startswith(("/", "~/", "./", "unix:", "tcp:")) and " " not in value


def secrets_from_environment(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of variables whose names say they are secret, longest first."""
    values = {
        value
        for name, value in env.items()
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH and not _looks_like_place(value)
    }
    return tuple(sorted(values, key=len, reverse=True))


def child_environment(env: Mapping[str, str], drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment for a command seri runs: without ``drop`` (the API key variables),
    without variables whose names say they are secret, and without any whose value carries
    a password in a URL. Paths and addresses (``SSH_AUTH_SOCK``) stay."""
    return {
        name: value
        for name, value in env.items()
        if name not in drop
        and not (is_secret_name(name) and not _looks_like_place(value))
        and not _URL_PASSWORD.search(value)
    }


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
        # Each pattern runs only where the text holds a literal it cannot match without:
        # a scan costs ~0.2 s a megabyte a pattern, and a command's whole output (tens of
        # megabytes) is spilled through here.
        if "=" in text:
            text = _SECRET_ASSIGNMENT.sub(lambda m: m[1] + m[2] + REDACTED + m[2], text)
        if _may_hold_a_shape(text):
            text = _SECRET_SHAPES.sub(REDACTED, text)
        if "://" in text:
            text = _URL_PASSWORD.sub(lambda m: m[1] + REDACTED + m[3], text)
        lowered = text.lower()
        if "password" in lowered or "passwd" in lowered or "secret" in lowered:
            text = _NETRC_PASSWORD.sub(_netrc_value, text)
            text = _CONFIG_PASSWORD.sub(_config_value, text)
        return text

    def value(self, value: Any) -> Any:
        """Redact every string in a JSON-like value, keys included."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value


def _netrc_value(match: re.Match[str]) -> str:
    value = match[2]
    if value.lower().strip("\"'") in _NOT_A_VALUE or value.startswith(("[", "=", ":")):
        return match[0]
    return match[1] + REDACTED


def _config_value(match: re.Match[str]) -> str:
    value = match[3]
    if value.lower() in _NOT_A_VALUE or value.startswith(("$", "%", "<", "/")):
        return match[0]
    if "." in value and value.replace(".", "").replace("_", "").isalnum() and value[0].isalpha():
        return match[0]  # settings.PASSWORD, os.environ: a reference in code
    start, end = match.start(3) - match.start(0), match.end(3) - match.start(0)
    return match[0][:start] + REDACTED + match[0][end:]


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
