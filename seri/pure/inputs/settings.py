"""Settings: config.json merged with the environment, validated, as one record.

The environment wins over config.json. The API key is deliberately not part of
this record: settings are written into trajectory headers, the key never is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import attrs

from seri.pure.inputs.config_keys import describe, unknown_keys
from seri.pure.inputs.errors import SeriError
from seri.pure.inputs.number_ranges import (
    BYTES,
    MAX_BUDGET_USD,
    MAX_RETENTION_DAYS,
    PROVIDER_INTEGER,
    TOKENS,
    TOOL_COUNT,
    TURNS,
    Range,
    finite_in,
    range_problem,
    shown,
    within,
    words,
)
from seri.pure.inputs.stop_sequences import stop_problem

DEFAULT_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_MODEL = "anthropic/claude-sonnet-4.5"
# Used when neither config.json nor GET /models names the model's window.
DEFAULT_CONTEXT_WINDOW = 128_000
DEFAULT_MAX_TURNS = 500
DEFAULT_SUBAGENT_MAX_TURNS = 25
DEFAULT_KEEP_TOKENS = 20_000
DEFAULT_ELIDE_BYTES = 4_096
DEFAULT_RETENTION_DAYS = 30
# How long the first model call of a chat waits for MCP servers still starting, in seconds.
DEFAULT_MCP_STARTUP_WAIT = 5.0
# A goal's check command (--until, /goal) is stopped after this long (config goal.check_timeout).
DEFAULT_GOAL_CHECK_TIMEOUT = 600.0
# Above this many MCP tools, they go out by name and one line, with tool_search for the rest.
DEFAULT_MCP_TOOL_SEARCH_THRESHOLD = 40
EFFORTS = ("max", "xhigh", "high", "medium", "low", "minimal", "none")

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class ConfigError(SeriError):
    """config.json or an environment variable holds a value seri cannot use."""


@attrs.frozen
class Settings:
    model: str = DEFAULT_MODEL
    base_url: str = DEFAULT_BASE_URL
    context_window: int | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    subagent_max_turns: int = DEFAULT_SUBAGENT_MAX_TURNS
    # The run's cost budget in USD (--max-budget-usd wins): None, no budget.
    max_budget_usd: float | None = None
    keep_tokens: int = DEFAULT_KEEP_TOKENS
    elide_bytes: int = DEFAULT_ELIDE_BYTES
    sampling: Mapping[str, Any] = _EMPTY
    provider: Mapping[str, Any] = _EMPTY
    reasoning_effort: str = ""
    trajectory_enabled: bool = True
    # Set when SERI_TRAJECTORY decided trajectory_enabled: 'on' or 'off'.
    trajectory_forced_by_env: str = ""
    trajectory_stored: bool = True
    retention_days: float = DEFAULT_RETENTION_DAYS
    # An invalid window must not stop a chat; pruning reports it and deletes nothing.
    retention_error: str = ""
    check_command: str = ""
    # A goal's check is stopped after this many seconds (config goal.check_timeout).
    goal_check_timeout: float = DEFAULT_GOAL_CHECK_TIMEOUT
    # compaction.auto: false never compacts without being asked (/compact, seri compact).
    compaction_auto: bool = True
    permissions: Mapping[str, Any] = _EMPTY
    # config.json's ``mcpServers`` as written (seri.pure.mcp.mcp_config reads it, with the env).
    mcp_servers: Mapping[str, Any] = _EMPTY
    # config.json's ``hooks`` as written, in Claude Code's shape (seri.pure.extensions.hooks reads
    # it).
    hooks: Mapping[str, Any] = _EMPTY
    mcp_startup_wait: float = DEFAULT_MCP_STARTUP_WAIT
    # -1: never defer; 0: always, when there is an MCP tool.
    mcp_tool_search_threshold: int = DEFAULT_MCP_TOOL_SEARCH_THRESHOLD
    # Secret variables a project's server of that name may read (seri.pure.permissions.trust).
    mcp_project_secrets: Mapping[str, tuple[str, ...]] = _EMPTY
    # Which setting chose base_url, for messages about reaching it.
    base_url_source: str = "seri's default"
    # Unknown keys in config.json, each with the closest known key: shown, not fatal.
    warnings: tuple[str, ...] = ()
    # config.json's `telemetry.otlp` as written (None when absent): whether it asks for live
    # OpenTelemetry export is decided by seri.pure.trajectories.otlp_settings, only when something
    # asks.
    telemetry_otlp: Any = None


def configured_max_tokens(settings: Settings) -> int | None:
    """The answer budget the sampling settings ask for, if any (either spelling)."""
    for key in ("max_tokens", "max_completion_tokens"):
        value = settings.sampling.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def budget_usd(text: str, name: str) -> float:
    """A cost budget in USD from the command line: a finite amount above zero."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if finite_in(value, 0.0, MAX_BUDGET_USD) is None:
        raise ConfigError(
            f"{name} must be an amount in USD above 0 and at most {MAX_BUDGET_USD:,.0f}, "
            f"e.g. 0.50, not {shown(text)}"
        )
    return value


def _budget(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"config.json: {name!r} must be an amount in USD, not {value!r}")
    return budget_usd(repr(value), f"config.json: {name!r}")


def parse_trajectory_env(value: str) -> bool | None:
    lowered = value.strip().lower()
    if lowered in ("on", "1", "true", "yes"):
        return True
    if lowered in ("off", "0", "false", "no"):
        return False
    return None


def _positive_int(name: str, value: Any, allowed: Range) -> int:
    problem = range_problem(f"config.json: '{name}'", value, allowed)
    if problem:
        raise ConfigError(problem)
    return int(value)


def _seconds(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 600:
        raise ConfigError(f"config.json: '{name}' must be seconds from 0 to 600, not {value!r}")
    return float(value)


def _threshold(name: str, value: Any) -> int:
    if not within(value, TOOL_COUNT):
        raise ConfigError(
            f"config.json: '{name}' must be a whole number of tools {words(TOOL_COUNT)} "
            f"(-1: never), not {shown(value)}"
        )
    return int(value)


def _grants(value: Any) -> Mapping[str, tuple[str, ...]]:
    """``mcp.project_secrets``: {server: [variable, ...]}."""
    shape = all(
        isinstance(names, list) and all(isinstance(n, str) for n in names)
        for names in (value.values() if isinstance(value, dict) else [None])
    )
    if not shape:
        raise ConfigError(
            "config.json: 'mcp.project_secrets' must be an object of server names to lists "
            f'of variable names, like {{"docs": ["DOCS_TOKEN"]}}, not {value!r}'
        )
    return MappingProxyType({str(k): tuple(v) for k, v in value.items()})


def _mapping(name: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError(f"config.json: '{name}' must be an object, not {value!r}")
    return MappingProxyType(dict(value))


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"config.json: '{name}' must be a string, not {value!r}")
    return value


def retention_days(value: Any) -> float:
    """The window in days; anything else ('forever', -1, 'abc') is an error that deletes nothing."""
    if finite_in(value, -math.inf, MAX_RETENTION_DAYS) is None:
        raise ConfigError(
            f"config.json: 'trajectory.retention_days' must be a number of days above 0 and "
            f"at most {MAX_RETENTION_DAYS:,.0f}, not {shown(value)}; "
            "nothing was pruned"
        )
    if value <= 0:
        raise ConfigError(
            f"config.json: 'trajectory.retention_days' must be above 0, not {value!r}; "
            "nothing was pruned"
        )
    return float(value)


def config_warnings(config: Mapping[str, Any]) -> tuple[str, ...]:
    """Unknown keys, each named with the closest known one.

    An unknown key inside ``permissions``, or a misspelt ``permissions`` itself, stops seri:
    running with a deny list silently ignored is worse than not running.
    """
    warnings = []
    for dotted, guess, strict in unknown_keys(config):
        message = describe(dotted, guess)
        if strict or guess == "permissions":
            raise ConfigError(
                f"{message} It is a safety setting, so seri stops rather than run without "
                "it; fix the key (allow, ask and deny go inside permissions)"
            )
        warnings.append(f"{message} It is ignored.")
    return tuple(warnings)


def _base_url(config: Mapping[str, Any], env: Mapping[str, str]) -> tuple[str, str]:
    if env.get("SERI_BASE_URL"):
        return env["SERI_BASE_URL"], "set by SERI_BASE_URL"
    if "base_url" in config:
        return _text("base_url", config["base_url"]), "set by base_url in config.json"
    return DEFAULT_BASE_URL, "seri's default"


def _sampling(value: Any) -> Mapping[str, Any]:
    sampling = _mapping("sampling", value)
    if "stop" in sampling:
        problem = stop_problem(sampling["stop"])
        if problem:
            raise ConfigError(problem)
    for key, item in sampling.items():
        if isinstance(item, float) and not math.isfinite(item):
            raise ConfigError(f"config.json: 'sampling.{key}' must be a finite number, not {item}")
        if isinstance(item, bool) or not isinstance(item, int):
            continue
        # An answer budget is tokens; any other whole number (seed, top_k) goes to the
        # provider as JSON, which holds integers exactly up to 2**53.
        allowed = TOKENS if key in ("max_tokens", "max_completion_tokens") else PROVIDER_INTEGER
        problem = range_problem(f"config.json: 'sampling.{key}'", item, allowed)
        if problem:
            raise ConfigError(problem)
    return sampling


def parse_settings(config: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """Build settings from config.json's object and the environment (which wins)."""
    warnings = config_warnings(config)
    compaction = _mapping("compaction", config.get("compaction", {}))
    trajectory = _mapping("trajectory", config.get("trajectory", {}))
    reasoning = _mapping("reasoning", config.get("reasoning", {}))
    check = _mapping("check", config.get("check", {}))
    goal = _mapping("goal", config.get("goal", {}))
    compaction_auto = compaction.get("auto", True)
    if not isinstance(compaction_auto, bool):
        raise ConfigError(
            f"config.json: 'compaction.auto' must be true or false, not {compaction_auto!r}"
        )
    check_timeout = goal.get("check_timeout", DEFAULT_GOAL_CHECK_TIMEOUT)
    if (
        isinstance(check_timeout, bool)
        or not isinstance(check_timeout, int | float)
        or not 0 < check_timeout <= 86_400
    ):
        raise ConfigError(
            "config.json: 'goal.check_timeout' must be seconds above 0 and at most 86400, "
            f"not {check_timeout!r}"
        )
    mcp = _mapping("mcp", config.get("mcp", {}))
    effort = _text("reasoning.effort", reasoning.get("effort", ""))
    if effort and effort not in EFFORTS:
        raise ConfigError(
            f"config.json: 'reasoning.effort' must be one of {', '.join(EFFORTS)}, not {effort!r}"
        )
    stored = trajectory.get("enabled", True)
    if not isinstance(stored, bool):
        raise ConfigError(
            f"config.json: 'trajectory.enabled' must be true or false, not {stored!r}"
        )
    enabled, forced = stored, ""
    if env.get("SERI_TRAJECTORY"):
        from_env = parse_trajectory_env(env["SERI_TRAJECTORY"])
        if from_env is None:
            raise ConfigError(
                f"SERI_TRAJECTORY must be on, off, 1 or 0, not {env['SERI_TRAJECTORY']!r}"
            )
        enabled, forced = from_env, ("on" if from_env else "off")
    window = config.get("context_window")
    base_url, base_url_source = _base_url(config, env)
    window_days, window_error = float(DEFAULT_RETENTION_DAYS), ""
    try:
        window_days = retention_days(trajectory.get("retention_days", DEFAULT_RETENTION_DAYS))
    except ConfigError as exc:
        window_error = str(exc)
    return Settings(
        model=env.get("SERI_MODEL") or _text("model", config.get("model", DEFAULT_MODEL)),
        base_url=base_url.strip().rstrip("/"),
        base_url_source=base_url_source,
        warnings=warnings,
        context_window=None if window is None else _positive_int("context_window", window, TOKENS),
        max_turns=_positive_int("max_turns", config.get("max_turns", DEFAULT_MAX_TURNS), TURNS),
        subagent_max_turns=_positive_int(
            "subagent_max_turns",
            config.get("subagent_max_turns", DEFAULT_SUBAGENT_MAX_TURNS),
            TURNS,
        ),
        max_budget_usd=_budget("max_budget_usd", config.get("max_budget_usd")),
        keep_tokens=_positive_int(
            "compaction.keep_tokens", compaction.get("keep_tokens", DEFAULT_KEEP_TOKENS), TOKENS
        ),
        elide_bytes=_positive_int(
            "compaction.elide_bytes", compaction.get("elide_bytes", DEFAULT_ELIDE_BYTES), BYTES
        ),
        sampling=_sampling(config.get("sampling", {})),
        provider=_mapping("provider", config.get("provider", {})),
        reasoning_effort=effort,
        trajectory_enabled=enabled,
        trajectory_forced_by_env=forced,
        trajectory_stored=stored,
        retention_days=window_days,
        retention_error=window_error,
        check_command=_text("check.command", check.get("command", "")),
        goal_check_timeout=float(check_timeout),
        compaction_auto=compaction_auto,
        permissions=_mapping("permissions", config.get("permissions", {})),
        mcp_servers=_mapping("mcpServers", config.get("mcpServers", {})),
        hooks=_mapping("hooks", config.get("hooks", {})),
        mcp_startup_wait=_seconds(
            "mcp.startup_wait", mcp.get("startup_wait", DEFAULT_MCP_STARTUP_WAIT)
        ),
        mcp_tool_search_threshold=_threshold(
            "mcp.tool_search_threshold",
            mcp.get("tool_search_threshold", DEFAULT_MCP_TOOL_SEARCH_THRESHOLD),
        ),
        mcp_project_secrets=_grants(mcp.get("project_secrets", {})),
        telemetry_otlp=_otlp_section(config.get("telemetry")),
    )


def _otlp_section(telemetry: Any) -> Any:
    """``telemetry.otlp`` as written, read-only when it is an object (None when absent)."""
    section = telemetry.get("otlp") if isinstance(telemetry, dict) else None
    return MappingProxyType(dict(section)) if isinstance(section, dict) else section
