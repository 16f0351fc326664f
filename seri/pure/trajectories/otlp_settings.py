"""Where OTLP export goes and how, from OpenTelemetry's standard variables and config.json.

Export is on when an endpoint is named: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (the signal's path,
``/v1/traces`` or ``/v1/metrics``, is appended), ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` /
``..._METRICS_ENDPOINT`` (used as they are), or ``telemetry.otlp.endpoint`` in config.json.
A signal is sent only where an endpoint for it is named, never to a guessed default, and
not at all when ``OTEL_TRACES_EXPORTER`` / ``OTEL_METRICS_EXPORTER`` leave ``otlp`` out or
``OTEL_SDK_DISABLED`` is true. The variables win over config.json, the per-signal ones over
the general ones.

Headers (``OTEL_EXPORTER_OTLP_HEADERS``, often an API key) are kept out of every message and
repr: an error names the variable and the header's name, never a value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs

from seri.pure.inputs.errors import SeriError
from seri.pure.trajectories.otlp_model import Attributes, AttrValue

Protocol = Literal["http/protobuf", "http/json"]
Signal = Literal["traces", "metrics"]
PROTOCOLS: tuple[Protocol, ...] = ("http/protobuf", "http/json")
DEFAULT_TIMEOUT_MS = 10_000
SERVICE_NAME = "seri"
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# The values of the content variable that put content on spans (the GenAI instrumentations
# take true/false, and SPAN_ONLY / SPAN_AND_EVENT / EVENT_ONLY / NO_CONTENT in newer ones).
_CONTENT_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CONFIG_KEYS = frozenset({"endpoint", "protocol", "headers", "capture_content"})


class OtlpConfigError(SeriError):
    """The export settings cannot be used as they are."""


@attrs.frozen
class Target:
    """Where one signal goes."""

    url: str
    protocol: Protocol
    signal: Signal = "traces"
    headers: tuple[tuple[str, str], ...] = attrs.field(default=(), repr=False)
    timeout: float = DEFAULT_TIMEOUT_MS / 1000
    gzip: bool = False
    # Which setting named the URL, for messages: "OTEL_EXPORTER_OTLP_ENDPOINT", say.
    source: str = ""

    @property
    def shown(self) -> str:
        """The URL as a message may show it: without user and password."""
        return shown_url(self.url)


@attrs.frozen
class OtlpSettings:
    traces: Target | None
    metrics: Target | None
    resource: Attributes
    capture_content: bool = False
    warnings: tuple[str, ...] = ()

    def secrets(self) -> tuple[str, ...]:
        """Header values, for the redactor: they must never be written down anywhere."""
        return tuple(
            value
            for target in (self.traces, self.metrics)
            if target is not None
            for _, value in target.headers
        )


def shown_url(url: str) -> str:
    """A URL fit for a message: no user, password or query (either may hold a key)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url.split("?", 1)[0]
    rest = rest.split("?", 1)[0].split("#", 1)[0]
    authority, slash, path = rest.partition("/")
    return f"{scheme}://{authority.rsplit('@', 1)[-1]}{slash}{path}"


def otlp_settings(
    env: Mapping[str, str], config: Any, version: str = "", *, require_endpoint: bool = True
) -> OtlpSettings | None:
    """The export settings, or None when nothing asks for export (with ``require_endpoint``
    false: settings with no target, for writing OTLP to a file instead).

    ``config`` is config.json's ``telemetry.otlp`` value (None when absent). Raises
    OtlpConfigError naming the setting at fault."""
    section = _config_section(config)
    disabled = env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
    if disabled and require_endpoint:
        return None
    warnings: list[str] = []
    traces = None if disabled else _target("traces", env, section, warnings)
    metrics = None if disabled else _target("metrics", env, section, warnings)
    if traces is None and metrics is None and require_endpoint:
        return None
    return OtlpSettings(
        traces=traces,
        metrics=metrics,
        resource=_resource(env, version, warnings),
        capture_content=_capture_content(env, section),
        warnings=tuple(warnings),
    )


def _config_section(config: Any) -> Mapping[str, Any]:
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise OtlpConfigError(
            'config.json: telemetry.otlp must be an object such as {"endpoint": '
            '"http://localhost:4318"}'
        )
    unknown = sorted(str(key) for key in config if key not in _CONFIG_KEYS)
    if unknown:
        raise OtlpConfigError(
            f"config.json: telemetry.otlp has no key {unknown[0]!r}; the keys are "
            + ", ".join(sorted(_CONFIG_KEYS))
        )
    return config


def _signal_exporter_on(signal: Signal, env: Mapping[str, str]) -> bool:
    chosen = env.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip().lower()
    return not chosen or "otlp" in {part.strip() for part in chosen.split(",")}


def _target(
    signal: Signal, env: Mapping[str, str], config: Mapping[str, Any], warnings: list[str]
) -> Target | None:
    if not _signal_exporter_on(signal, env):
        return None
    upper = signal.upper()
    own = f"OTEL_EXPORTER_OTLP_{upper}_ENDPOINT"
    url, source = "", ""
    if env.get(own, "").strip():
        url, source = _checked_url(own, env[own].strip()), own
    elif env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip():
        base = _checked_url("OTEL_EXPORTER_OTLP_ENDPOINT", env["OTEL_EXPORTER_OTLP_ENDPOINT"])
        url, source = _signal_url(base, signal), "OTEL_EXPORTER_OTLP_ENDPOINT"
    elif config.get("endpoint") not in (None, ""):
        endpoint = config["endpoint"]
        if not isinstance(endpoint, str):
            raise OtlpConfigError("config.json: telemetry.otlp.endpoint must be a URL text")
        base = _checked_url("config.json telemetry.otlp.endpoint", endpoint)
        url, source = _signal_url(base, signal), "config.json telemetry.otlp.endpoint"
    if not url:
        return None
    return Target(
        url=url,
        protocol=_protocol(signal, env, config),
        signal=signal,
        headers=_headers(signal, env, config),
        timeout=_timeout(signal, env, warnings),
        gzip=_compression(signal, env) == "gzip",
        source=source,
    )


def _first(env: Mapping[str, str], *names: str) -> tuple[str, str]:
    """(name, value) of the first of ``names`` set to something, or ("", "")."""
    for name in names:
        value = env.get(name, "")
        if value.strip():
            return name, value
    return "", ""


def _compression(signal: Signal, env: Mapping[str, str]) -> str:
    _, value = _first(
        env, f"OTEL_EXPORTER_OTLP_{signal.upper()}_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"
    )
    return value.strip().lower()


def _checked_url(source: str, value: str) -> str:
    url = value.strip()
    if not re.match(r"https?://[^/\s]+", url):
        raise OtlpConfigError(
            f"{source} must be an http:// or https:// URL such as http://localhost:4318, "
            f"not {shown_url(url)!r}"
        )
    return url


def _signal_url(base: str, signal: Signal) -> str:
    """The general endpoint names the collector; each signal has its own path below it."""
    return f"{base.rstrip('/')}/v1/{signal}"


def _protocol(signal: Signal, env: Mapping[str, str], config: Mapping[str, Any]) -> Protocol:
    name, value = _first(
        env, f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    if not name and config.get("protocol") is not None:
        name, value = "config.json telemetry.otlp.protocol", config["protocol"]
    if not name:
        return "http/protobuf"
    chosen = value.strip().lower() if isinstance(value, str) else value
    for protocol in PROTOCOLS:
        if chosen == protocol:
            return protocol
    grpc = " (seri sends OTLP over HTTP only, usually port 4318)" if chosen == "grpc" else ""
    raise OtlpConfigError(f"{name} is {value!r}{grpc}; use http/protobuf or http/json")


def _headers(
    signal: Signal, env: Mapping[str, str], config: Mapping[str, Any]
) -> tuple[tuple[str, str], ...]:
    name, value = _first(
        env, f"OTEL_EXPORTER_OTLP_{signal.upper()}_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"
    )
    if name:
        return _parse_pairs(name, value, header_names=True)
    given = config.get("headers")
    if given is None:
        return ()
    where = "config.json telemetry.otlp.headers"
    if not isinstance(given, Mapping) or not all(
        isinstance(key, str) and isinstance(item, str) for key, item in given.items()
    ):
        raise OtlpConfigError(f'{where} must be an object of texts, such as {{"x-api-key": "…"}}')
    pairs = tuple((str(key), str(item)) for key, item in given.items())
    for key, item in pairs:
        _check_header(where, key, item)
    return pairs


def _check_header(where: str, key: str, value: str) -> None:
    if not _HEADER_NAME.fullmatch(key):
        raise OtlpConfigError(f"{where}: {key[:40]!r} is not a valid header name")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in value if char != "\t"):
        raise OtlpConfigError(f"{where}: the value of header {key!r} holds a control character")


def _parse_pairs(
    name: str, text: str, *, header_names: bool = False
) -> tuple[tuple[str, str], ...]:
    """``key1=value1,key2=value2`` with percent-encoded values (W3C baggage style)."""
    pairs: list[tuple[str, str]] = []
    for number, entry in enumerate(text.split(","), start=1):
        if not entry.strip():
            continue
        key, sep, value = entry.partition("=")
        key = key.strip()
        if not sep or not key:
            raise OtlpConfigError(f"{name}: entry {number} is not key=value")
        decoded = percent_decoded(value.strip())
        if decoded is None:
            raise OtlpConfigError(f"{name}: entry {number} ({key[:40]!r}) has a bad %-escape")
        if header_names:
            _check_header(name, key, decoded)
        pairs.append((key, decoded))
    return tuple(pairs)


def percent_decoded(text: str) -> str | None:
    """``%20`` and the like decoded (as UTF-8); None when an escape is malformed."""
    if "%" not in text:
        return text
    out = bytearray()
    index = 0
    while index < len(text):
        char = text[index]
        if char != "%":
            out += char.encode("utf-8")
            index += 1
            continue
        pair = text[index + 1 : index + 3]
        if len(pair) != 2 or not all(c in "0123456789abcdefABCDEF" for c in pair):
            return None
        out.append(int(pair, 16))
        index += 3
    return out.decode("utf-8", "replace")


def _timeout(signal: Signal, env: Mapping[str, str], warnings: list[str]) -> float:
    name, value = _first(
        env, f"OTEL_EXPORTER_OTLP_{signal.upper()}_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"
    )
    if not name:
        return DEFAULT_TIMEOUT_MS / 1000
    try:
        millis = float(value)
    except ValueError:
        millis = -1.0
    if not 0 < millis < 3_600_000:
        warnings.append(
            f"{name} is {value!r}, not a number of milliseconds; using {DEFAULT_TIMEOUT_MS}"
        )
        return DEFAULT_TIMEOUT_MS / 1000
    return millis / 1000


def _resource(env: Mapping[str, str], version: str, warnings: list[str]) -> Attributes:
    """OTEL_RESOURCE_ATTRIBUTES, with OTEL_SERVICE_NAME over its service.name; a malformed
    value is dropped whole (as the SDKs do) with a warning."""
    given: tuple[tuple[str, str], ...] = ()
    text = env.get("OTEL_RESOURCE_ATTRIBUTES", "")
    if text.strip():
        try:
            given = _parse_pairs("OTEL_RESOURCE_ATTRIBUTES", text)
        except OtlpConfigError as exc:
            warnings.append(f"{exc}; OTEL_RESOURCE_ATTRIBUTES is ignored")
    found: dict[str, AttrValue] = dict(given)
    service = env.get("OTEL_SERVICE_NAME", "").strip()
    if service:
        found["service.name"] = service
    found.setdefault("service.name", SERVICE_NAME)
    if version:
        found.setdefault("service.version", version)
    found.setdefault("telemetry.sdk.name", "seri")
    found.setdefault("telemetry.sdk.language", "python")
    if version:
        found.setdefault("telemetry.sdk.version", version)
    return tuple(found.items())


def _capture_content(env: Mapping[str, str], config: Mapping[str, Any]) -> bool:
    value = env.get(CONTENT_VARIABLE, "").strip()
    if value:
        return value.lower() in _CONTENT_ON
    chosen = config.get("capture_content", False)
    if not isinstance(chosen, bool):
        raise OtlpConfigError("config.json: telemetry.otlp.capture_content must be true or false")
    return chosen
