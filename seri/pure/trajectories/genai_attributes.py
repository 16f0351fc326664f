"""The attributes of seri's spans, read from trajectory records, named by the OpenTelemetry
GenAI semantic conventions (``gen_ai.*``) where they name the thing and ``seri.*`` where not.

Content (tool arguments and results, what a person typed, file paths, commands) is only
ever read through ``Content``: without the opt-in it yields nothing; with it every string
is redacted and large ones are elided, as the recorder does before anything is stored.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.agent.usage_totals import UsageTotals
from seri.pure.trajectories import event_record, events
from seri.pure.trajectories.otlp_model import Attributes, AttrValue
from seri.pure.trajectories.redaction import Redactor, elide_large

AGENT_NAME = "seri"
# Strings over this many UTF-8 bytes are elided from exported content, as from recordings.
CONTENT_LIMIT = 2048

# Hosts whose provider the conventions name (gen_ai.provider.name's well-known values).
# Any other server is spoken to through OpenAI's API, which is the flavour seri sends.
_PROVIDERS = (
    ("openrouter.ai", "openrouter"),
    ("api.openai.com", "openai"),
    ("openai.azure.com", "azure.ai.openai"),
    ("api.anthropic.com", "anthropic"),
    ("api.deepseek.com", "deepseek"),
    ("api.groq.com", "groq"),
    ("api.mistral.ai", "mistral_ai"),
    ("generativelanguage.googleapis.com", "gcp.gemini"),
    ("aiplatform.googleapis.com", "gcp.vertex_ai"),
    ("api.x.ai", "x_ai"),
    ("api.perplexity.ai", "perplexity"),
    ("api.moonshot.ai", "moonshot_ai"),
    ("cohere.com", "cohere"),
    ("amazonaws.com", "aws.bedrock"),
)
DEFAULT_PROVIDER = "openai"

# Sampling settings from the header, as gen_ai.request.* attributes.
_SAMPLING = (
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("top_k", "gen_ai.request.top_k"),
    ("max_tokens", "gen_ai.request.max_tokens"),
    ("max_completion_tokens", "gen_ai.request.max_tokens"),
    ("seed", "gen_ai.request.seed"),
    ("frequency_penalty", "gen_ai.request.frequency_penalty"),
    ("presence_penalty", "gen_ai.request.presence_penalty"),
    ("stop", "gen_ai.request.stop_sequences"),
)


def scalar(value: Any) -> AttrValue | None:
    """A JSON value as an attribute value, or None where OTLP has no faithful equivalent
    (null, objects, mixed or nested arrays, NaN)."""
    if isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list | tuple):
        items = [scalar(item) for item in value]
        if all(isinstance(item, str) for item in items):
            return tuple(str(item) for item in items)
        if items and all(isinstance(item, bool) for item in items):
            return tuple(bool(item) for item in items)
        if items and all(type(item) is int for item in items):
            return tuple(int(item) for item in items if isinstance(item, int))
        if items and all(type(item) in (int, float) for item in items):
            return tuple(float(item) for item in items if isinstance(item, int | float))
    return None


@attrs.frozen
class Content:
    """The opt-in: content reaches an export only through here, redacted and elided."""

    captured: bool = False
    redactor: Redactor = attrs.Factory(Redactor)
    limit: int = CONTENT_LIMIT

    def text(self, value: Any) -> str | None:
        if not self.captured or value is None:
            return None
        kept = elide_large(self.redactor.value(value), self.limit)
        if isinstance(kept, str):
            return kept
        return json.dumps(kept, ensure_ascii=False, separators=(",", ":"))

    def pairs(self, data: Mapping[str, Any], fields: Mapping[str, str]) -> Attributes:
        """``fields`` maps a record field to its attribute key."""
        if not self.captured:
            return ()
        found = ((key, self.text(data.get(name))) for name, key in fields.items())
        return tuple((key, value) for key, value in found if value is not None)


def diagnostic(redactor: Redactor, value: Any) -> str:
    """seri's own words about a failure (a provider's error message, a retry's reason):
    not content, but passed through the redactor all the same."""
    return redactor.text(value) if isinstance(value, str) else ""


# -- the server ------------------------------------------------------------------------------


@attrs.frozen
class Server:
    address: str = ""
    port: int = 0
    provider: str = DEFAULT_PROVIDER

    def attributes(self) -> Attributes:
        found: list[tuple[str, AttrValue]] = [("gen_ai.provider.name", self.provider)]
        if self.address:
            found.append(("server.address", self.address))
            if self.port:
                found.append(("server.port", self.port))
        return tuple(found)


def server_of(base_url: Any) -> Server:
    """The provider's host, port and conventional name, from the header's base URL."""
    if not isinstance(base_url, str) or "://" not in base_url:
        return Server()
    scheme, rest = base_url.split("://", 1)
    authority = rest.split("/", 1)[0].split("?", 1)[0].rsplit("@", 1)[-1]
    host, port_text = authority, ""
    if authority.startswith("["):  # [::1]:8080
        host, _, after = authority[1:].partition("]")
        port_text = after[1:] if after.startswith(":") else ""
    elif authority.count(":") == 1:
        host, port_text = authority.split(":")
    port = int(port_text) if port_text.isdigit() else {"https": 443, "http": 80}.get(scheme, 0)
    host = host.lower()
    provider = next(
        (name for suffix, name in _PROVIDERS if host == suffix or host.endswith("." + suffix)),
        DEFAULT_PROVIDER,
    )
    return Server(host, port, provider)


def request_attributes(header: Mapping[str, Any]) -> Attributes:
    """The sampling settings and reasoning effort a run's requests carried."""
    sampling = header.get("sampling")
    found: list[tuple[str, AttrValue]] = []
    if isinstance(sampling, Mapping):
        for name, key in _SAMPLING:
            value = scalar(sampling.get(name))
            if name == "stop" and isinstance(value, str):
                value = (value,)
            if value is not None and key not in dict(found):
                found.append((key, value))
    effort = header.get("reasoning_effort")
    if isinstance(effort, str) and effort:
        found.append(("seri.request.reasoning_effort", effort))
    return tuple(found)


# -- usage -----------------------------------------------------------------------------------


def usage_attributes(totals: UsageTotals) -> Attributes:
    """gen_ai.usage.*; nothing at all when no call reported its usage."""
    if not totals.reported:
        return ()
    found: list[tuple[str, AttrValue]] = [
        ("gen_ai.usage.input_tokens", totals.input_tokens),
        ("gen_ai.usage.output_tokens", totals.output_tokens),
        ("gen_ai.usage.cache_read.input_tokens", totals.cached_tokens),
        ("gen_ai.usage.cache_creation.input_tokens", totals.cache_write_tokens),
        ("gen_ai.usage.reasoning.output_tokens", totals.reasoning_tokens),
    ]
    # Not in the conventions yet; the key Langfuse and others read for a call's price.
    if totals.cost is not None:
        found.append(("gen_ai.usage.cost", totals.cost))
    if totals.upstream_cost is not None:
        found.append(("seri.usage.upstream_cost", totals.upstream_cost))
    return tuple(found)


# -- span events -----------------------------------------------------------------------------

# Free text among the plain fields: seri's own wording, redacted like a diagnostic.
_DIAGNOSTIC_FIELDS = frozenset({"reason", "error", "why"})


def _span_event_fields(kind: type[event_record.Event]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A record's fields as its span event carries them (its fields say so, in
    ``events.py``): the plain ones, seri's own wording last, and the content ones."""
    plain: list[str] = []
    private: list[str] = []
    for item in attrs.fields(kind):
        how = item.metadata.get("telemetry")
        if isinstance(how, tuple):  # a flattened field: its keys are named with it
            plain.extend(how[0])
            private.extend(how[1])
        elif how:
            (plain if how == "plain" else private).append(
                item.metadata.get("export_name") or item.name
            )
    wording = [name for name in plain if name in _DIAGNOSTIC_FIELDS]
    return tuple(n for n in plain if n not in _DIAGNOSTIC_FIELDS) + tuple(wording), tuple(private)


# For each record type that becomes a span event: the fields carried as they are, and the
# fields that are content (carried only with the opt-in). A type none of whose fields is
# marked (one added later) still becomes an event, with its numbers and flags only: its
# strings might be content.
EVENT_FIELDS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    kind.type: _span_event_fields(kind)
    for kind in events.EVENT_TYPES
    if any(_span_event_fields(kind))
}


def event_attributes(type_: str, data: Mapping[str, Any], content: Content) -> Attributes:
    """``seri.<type>.<field>`` attributes of the span event a record becomes."""
    plain, private = EVENT_FIELDS.get(type_, ((), ()))
    found: list[tuple[str, AttrValue]] = []
    if type_ in EVENT_FIELDS:
        for name in plain:
            value = data.get(name)
            if name in _DIAGNOSTIC_FIELDS and isinstance(value, str):
                value = diagnostic(content.redactor, value)
            kept = scalar(value)
            if kept is not None:
                found.append((f"seri.{type_}.{name}", kept))
    else:
        for name, value in data.items():
            kept = scalar(value)
            if kept is not None and not isinstance(kept, str | tuple):
                found.append((f"seri.{type_}.{name}", kept))
    found.extend(content.pairs(data, {name: f"seri.{type_}.{name}" for name in private}))
    return tuple(found)


def scalar_items(pairs: tuple[tuple[str, Any], ...]) -> Attributes:
    """The pairs whose values are attribute values, in order."""
    kept = ((key, scalar(value)) for key, value in pairs)
    return tuple((key, value) for key, value in kept if value is not None)
