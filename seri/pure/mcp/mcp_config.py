"""MCP server entries as people already write them: Claude Code's ``mcpServers`` shape.

A project's ``.mcp.json`` and seri's ``config.json`` both hold ``{"mcpServers": {name: entry}}``.
An entry is a local program spoken to over stdio (``command``, ``args``, ``env``, ``cwd``) or a
remote endpoint spoken to over streamable HTTP (``url``, ``headers``). The ``type`` field says
which; when it is absent, ``command`` means stdio and ``url`` means HTTP, as in Claude Code.
The spellings other agents use for the same two transports are accepted too, so that a file
copied from them needs no edit: ``local``/``remote`` (opencode), ``streamable-http`` and
``streamableHttp`` (goose, the SDKs), ``transportType`` for ``type``, ``httpUrl`` (gemini-cli)
and ``serverUrl`` (Windsurf) for ``url``, a ``command`` given as a list (opencode),
``disabled: true`` and ``enabled: false``. Keys seri does not know (``description``) are ignored.

``${VAR}`` and ``${VAR:-default}`` are expanded in ``command``, ``args``, ``env`` values,
``url`` and ``headers`` values, from the environment seri runs in, exactly the two forms
Claude Code documents: a set variable (even an empty one) gives its value, an unset one its
default. An unset variable without a default is a problem for that one server, which then does
not start; the other servers are unaffected. A bare ``$VAR`` stays as written (Claude Code
does not expand it either), and so does anything in braces that is not a variable name
(``${x%/}``), so shell parameter expansion in an argument reaches the program untouched.
A project's entries are read with ``seri.pure.permissions.trust``'s policy: a ``${VAR}`` naming
one of the person's secrets (seri's key, a secret-looking variable) is never expanded and makes
that server a problem, unless config.json grants that variable to that server.

Each problem is a value naming the server, the file and the fix; nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs

from seri.pure.permissions.trust import PERSON_POLICY, ExpansionPolicy, entry_digest, shown_entry

STDIO = "stdio"
HTTP = "http"
ERAS = ("auto", "legacy", "modern")

_STDIO_TYPES = frozenset({"stdio", "local"})
_HTTP_TYPES = frozenset(
    {"http", "streamable-http", "streamable_http", "streamablehttp", "remote", "streamable"}
)
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
# RFC 9110 token characters: what a header name may be made of.
_HEADER_NAME = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


@attrs.frozen
class McpServerConfig:
    """One server seri may start or connect to, with every variable already expanded.

    ``source`` is the file the entry came from, shown to people (``seri mcp list``, errors);
    ``call_timeout`` is the entry's own ``timeout`` (milliseconds in the file, seconds here),
    ``None`` when it gave none; ``era`` forces a protocol era (``"auto"`` probes).
    ``digest`` is what an approval covers: the whole entry as written (``permissions.trust``);
    ``shown`` the entry as written with its secrets masked, one line of JSON.
    """

    name: str
    transport: str
    source: str = ""
    command: str = ""
    args: tuple[str, ...] = ()
    # A value here may be a secret the person granted (permissions.trust): never in a repr.
    env: tuple[tuple[str, str], ...] = attrs.field(default=(), repr=False)
    cwd: str = ""
    url: str = ""
    headers: tuple[tuple[str, str], ...] = attrs.field(default=(), repr=False)
    era: str = "auto"
    call_timeout: float | None = None
    digest: str = ""
    shown: str = ""


@attrs.frozen
class McpConfigProblem:
    """An entry that cannot be used, and why, in words that say what to change."""

    name: str
    source: str
    message: str
    # The whole file or section is unusable, not one server (whose name may be anything,
    # "*" included, so the name cannot say it).
    whole_file: bool = False

    def line(self) -> str:
        if self.whole_file:
            return f"MCP servers of {self.source or 'the configuration'}: {self.message}"
        where = f" in {self.source}" if self.source else ""
        return f"MCP server {self.name!r}{where}: {self.message}"


@attrs.frozen
class McpServerSet:
    """The servers one file (or several, combined) declares."""

    servers: tuple[McpServerConfig, ...] = ()
    problems: tuple[McpConfigProblem, ...] = ()
    disabled: tuple[str, ...] = ()

    def names(self) -> tuple[str, ...]:
        return tuple(server.name for server in self.servers)

    def get(self, name: str) -> McpServerConfig | None:
        return next((server for server in self.servers if server.name == name), None)


class _EntryError(Exception):
    """An entry's problem, raised inside this module only and turned into a value."""


def expand_variables(text: str, env: Mapping[str, str]) -> tuple[str, tuple[str, ...]]:
    """``text`` with ``${VAR}`` and ``${VAR:-default}`` replaced; also the unset names that
    had no default (their references stay as written)."""
    missing: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, default = match[1], match[2]
        if name in env:
            return env[name]
        if default is not None:
            return default
        missing.append(name)
        return match[0]

    return _VARIABLE.sub(replace, text), tuple(dict.fromkeys(missing))


def servers_from_document(
    document: object,
    env: Mapping[str, str],
    source: str,
    policy: ExpansionPolicy = PERSON_POLICY,
) -> McpServerSet:
    """The ``mcpServers`` of a parsed ``.mcp.json`` or ``config.json`` (no key: no servers);
    ``policy`` says which variables its ``${VAR}`` may expand (a project's: not secrets)."""
    if not isinstance(document, Mapping):
        return McpServerSet(
            problems=(
                McpConfigProblem("*", source, "the file must hold a JSON object", whole_file=True),
            )
        )
    section = document.get("mcpServers")
    if section is None:
        return McpServerSet()
    return parse_servers(section, env, source, policy)


def parse_servers(
    section: object,
    env: Mapping[str, str],
    source: str,
    policy: ExpansionPolicy = PERSON_POLICY,
) -> McpServerSet:
    """Every entry of an ``mcpServers`` object, each usable, disabled, or a problem."""
    if not isinstance(section, Mapping):
        problem = McpConfigProblem(
            "*",
            source,
            '"mcpServers" must be an object of {name: server entry}',
            whole_file=True,
        )
        return McpServerSet(problems=(problem,))
    servers: list[McpServerConfig] = []
    problems: list[McpConfigProblem] = []
    disabled: list[str] = []
    for raw_name, entry in section.items():
        name = str(raw_name)
        if not name.strip():
            problems.append(McpConfigProblem(name, source, "a server needs a non-empty name"))
            continue
        if isinstance(entry, Mapping) and _is_disabled(entry):
            disabled.append(name)
            continue
        try:
            parsed = _parse_entry(name, entry, _Expander(env, policy, name), source)
            servers.append(
                attrs.evolve(parsed, digest=entry_digest(entry), shown=shown_entry(entry))
            )
        except _EntryError as exc:
            problems.append(McpConfigProblem(name, source, str(exc)))
    return McpServerSet(tuple(servers), tuple(problems), tuple(disabled))


def combine(lower: McpServerSet, higher: McpServerSet) -> McpServerSet:
    """Both sets as one; where both name a server, ``higher``'s entry (or problem) wins.

    Claude Code's precedence is project over user, so a project's ``.mcp.json`` is passed as
    ``higher`` and the user's ``config.json`` as ``lower``.
    """
    named = (p.name for p in higher.problems if not p.whole_file)
    taken = {*higher.names(), *named, *higher.disabled}
    return McpServerSet(
        servers=(*(s for s in lower.servers if s.name not in taken), *higher.servers),
        problems=(*(p for p in lower.problems if p.name not in taken), *higher.problems),
        disabled=(*(d for d in lower.disabled if d not in taken), *higher.disabled),
    )


def _is_disabled(entry: Mapping[str, Any]) -> bool:
    return entry.get("disabled") is True or entry.get("enabled") is False


def _parse_entry(name: str, entry: object, expand: _Expander, source: str) -> McpServerConfig:
    if not isinstance(entry, Mapping):
        raise _EntryError("the entry must be an object with a command or a url")
    transport = _transport(entry)
    era = entry.get("protocol", "auto")
    if era not in ERAS:
        raise _EntryError(f'"protocol" must be one of {", ".join(ERAS)}, not {era!r}')
    common: dict[str, Any] = {
        "name": name,
        "source": source,
        "era": era,
        "call_timeout": _timeout(entry.get("timeout")),
    }
    if transport == STDIO:
        command, args = _command(entry, expand)
        config = McpServerConfig(
            transport=STDIO,
            command=command,
            args=args,
            env=_string_pairs(entry.get("env"), "env", expand, header=False),
            cwd=expand.one(_string(entry.get("cwd", ""), "cwd"), "cwd"),
            **common,
        )
    else:
        config = McpServerConfig(
            transport=HTTP,
            url=_url(entry, expand),
            headers=_string_pairs(entry.get("headers"), "headers", expand, header=True),
            **common,
        )
    expand.check()
    return config


_URL_KEYS = ("url", "httpUrl", "serverUrl")


def _transport(entry: Mapping[str, Any]) -> str:
    kind = entry.get("type", entry.get("transportType"))
    has_command = entry.get("command") not in (None, "", [])
    has_url = any(entry.get(key) for key in _URL_KEYS)
    if kind is None:
        if has_command:
            return STDIO
        if has_url:
            return HTTP
        raise _EntryError(
            'give "command" (a program to run, spoken to over stdio) or "url" '
            "(a streamable HTTP endpoint)"
        )
    if not isinstance(kind, str):
        raise _EntryError('"type" must be a string: "stdio" or "http"')
    folded = kind.strip().lower()
    if folded in _STDIO_TYPES:
        if not has_command:
            raise _EntryError(f'type {kind!r} needs a "command"')
        return STDIO
    if folded in _HTTP_TYPES:
        if not has_url:
            raise _EntryError(f'type {kind!r} needs a "url"')
        return HTTP
    if folded == "sse":
        raise _EntryError(
            'type "sse" is the HTTP+SSE transport of 2024-11-05, deprecated since 2025-03-26, '
            "which seri does not speak; if the server also serves streamable HTTP (usually at "
            'its /mcp path), set "type": "http" and point "url" there'
        )
    raise _EntryError(f'unknown type {kind!r}: seri speaks "stdio" and "http" (streamable HTTP)')


def _command(entry: Mapping[str, Any], expand: _Expander) -> tuple[str, tuple[str, ...]]:
    command = entry.get("command")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _EntryError('"args" must be a list of strings')
    if isinstance(command, list):
        # opencode writes the program and its arguments as one list.
        if not command or not all(isinstance(part, str) for part in command):
            raise _EntryError('"command" as a list must hold the program and its arguments')
        command, args = command[0], [*command[1:], *args]
    if not isinstance(command, str) or not command.strip():
        raise _EntryError('"command" must name a program')
    expanded_args = tuple(expand.one(arg, f"args[{n}]") for n, arg in enumerate(args))
    return expand.one(command, "command"), expanded_args


def _url(entry: Mapping[str, Any], expand: _Expander) -> str:
    raw = next((entry[key] for key in _URL_KEYS if entry.get(key)), None)
    if not isinstance(raw, str):
        raise _EntryError('"url" must be a string')
    url = expand.one(raw.strip(), "url")
    if expand.pending or url.lower().startswith(("http://", "https://")):
        return url
    raise _EntryError(f'"url" must start with http:// or https://, not {url[:60]!r}')


def _string(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise _EntryError(f'"{field}" must be a string')
    return value


def _timeout(value: object) -> float | None:
    if value is None:
        return None
    # At most a day: a timeout of 1e308 ms would overflow the waits it sets.
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 86_400_000:
        raise _EntryError('"timeout" must be a positive number of milliseconds, at most a day')
    return float(value) / 1000.0


def _string_pairs(
    value: object, field: str, expand: _Expander, *, header: bool
) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise _EntryError(f'"{field}" must be an object of names to strings')
    pairs: list[tuple[str, str]] = []
    for key, raw in value.items():
        name = str(key)
        scalar = _scalar_text(raw)
        if scalar is None:
            raise _EntryError(f'"{field}.{name}" must be a string')
        text = expand.one(scalar, f"{field}.{name}")
        if header:
            _check_header(name, text)
        elif not name or "=" in name or "\0" in name or "\0" in text:
            raise _EntryError(f'"{field}" has a variable name or value a process cannot take')
        pairs.append((name, text))
    return tuple(pairs)


def _scalar_text(value: object) -> str | None:
    """A string as is; a number or a boolean as JSON writes it (people write ``"DEBUG": true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value if isinstance(value, str) else None


def _check_header(name: str, value: str) -> None:
    if not _HEADER_NAME.match(name):
        raise _EntryError(f"header name {name!r} is not a valid HTTP header name")
    if any(ch in value for ch in "\r\n\0"):
        # A line break in a value would let the file add headers (or a body) of its own.
        raise _EntryError(f"header {name!r} has a line break in its value")


class _Expander:
    """Expands variables field by field, remembering which were unset and where, and which
    the policy refused (those are never expanded: the entry becomes a problem)."""

    def __init__(self, env: Mapping[str, str], policy: ExpansionPolicy, server: str) -> None:
        self._env = env
        self._policy = policy
        self._server = server
        self._missing: dict[str, str] = {}
        self._refused: list[str] = []

    @property
    def pending(self) -> bool:
        return bool(self._missing or self._refused)

    def one(self, text: str, field: str) -> str:
        env = self._env
        if not self._policy.trusted:
            refused = [
                match[1]
                for match in _VARIABLE.finditer(text)
                if self._policy.refuses(self._server, match[1], env.get(match[1], ""))
            ]
            if refused:
                self._refused.extend(refused)
                env = {k: v for k, v in env.items() if k not in refused}
        expanded, missing = expand_variables(text, env)
        for variable in missing:
            if variable not in self._refused:
                self._missing.setdefault(variable, field)
        return expanded

    def check(self) -> None:
        if self._refused:
            raise _EntryError(self._policy.refusal(self._server, self._refused))
        if not self._missing:
            return
        listed = ", ".join(f"${{{var}}} (in {field})" for var, field in self._missing.items())
        first = next(iter(self._missing))
        raise _EntryError(
            f"{listed} {'is' if len(self._missing) == 1 else 'are'} not set and "
            f"{'has' if len(self._missing) == 1 else 'have'} no default; set "
            f"{'it' if len(self._missing) == 1 else 'them'} in the environment seri runs in, "
            f"or write ${{{first}:-default}}"
        )
