"""The keys config.json may hold, and what to say about one that is not among them.

A misspelt key does nothing, silently, which is how ``permisions`` once switched a deny
list off. So every key seri does not know is named, with the known key it most likely
meant. Most are warnings (seri goes on with the rest of the file); a key it does not know
inside ``permissions`` is an error, because a safety setting must never be half read.

``KNOWN_KEYS`` is the one list: a key parsed by ``settings.parse_settings`` must be added
here too (a test checks that every documented key is).
"""

from __future__ import annotations

from collections.abc import Mapping

# None: any keys inside (passed through to the provider or checked elsewhere).
KnownKeys = Mapping[str, "KnownKeys | None"]

KNOWN_KEYS: KnownKeys = {
    "model": None,
    "base_url": None,
    "context_window": None,
    "max_turns": None,
    "subagent_max_turns": None,
    "max_budget_usd": None,
    "compaction": {"keep_tokens": None, "elide_bytes": None, "auto": None},
    "sampling": None,
    "provider": None,
    "reasoning": {"effort": None},
    "trajectory": {"enabled": None, "retention_days": None},
    "check": {"command": None},
    "goal": {"check_timeout": None},
    "permissions": {"allow": None, "ask": None, "deny": None},
    # OTLP export; its keys are checked where it is read (seri.pure.trajectories.otlp_settings).
    "telemetry": {"otlp": None},
    # MCP servers, in Claude Code's shape (checked where read: seri.pure.mcp.mcp_config).
    "mcpServers": None,
    # Hooks, in Claude Code's shape (checked where read: seri.pure.extensions.hooks).
    "hooks": None,
    "mcp": {"startup_wait": None, "tool_search_threshold": None, "project_secrets": None},
}
# Sections where an unknown key is an error rather than a warning.
STRICT_SECTIONS = frozenset({"permissions"})


def closest(key: str, known: list[str]) -> str:
    """The known key ``key`` most likely meant, or "" when none is close."""
    import difflib  # only when a key is unknown: every command reads the config

    lowered = {name.lower(): name for name in known}
    if key.lower() in lowered:
        return lowered[key.lower()]
    matches = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[matches[0]] if matches else ""


def unknown_keys(
    config: Mapping[str, object], known: KnownKeys = KNOWN_KEYS, prefix: str = ""
) -> list[tuple[str, str, bool]]:
    """Every unknown key as (dotted name, the closest known dotted name or "", is an error)."""
    found: list[tuple[str, str, bool]] = []
    names = sorted(known)
    for key in config:
        dotted = f"{prefix}{key}"
        if key not in known:
            guess = closest(str(key), names)
            strict = prefix.rstrip(".") in STRICT_SECTIONS
            found.append((dotted, f"{prefix}{guess}" if guess else "", strict))
            continue
        inner = known[key]
        value = config[key]
        if inner is not None and isinstance(value, Mapping):
            found.extend(unknown_keys(value, inner, f"{dotted}."))
    return found


def describe(dotted: str, guess: str) -> str:
    hint = f"; did you mean '{guess}'?" if guess else ""
    return f"config.json: unknown key '{dotted}'{hint}"
