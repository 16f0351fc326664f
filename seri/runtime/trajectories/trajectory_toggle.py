"""The recording toggle, shared by `seri trajectory on|off|status` and `/trajectory [on|off]`.

What is stored goes to config.json (``trajectory.enabled``). SERI_TRAJECTORY in
the environment wins over it at every start, so setting the toggle against
that variable says so instead of pretending it took effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from seri.io.inputs.config import read_config, set_config_value
from seri.io.session.profile_files import ensure_profile
from seri.pure.inputs.errors import SeriError
from seri.pure.inputs.settings import ConfigError, parse_trajectory_env

ENV_NAME = "SERI_TRAJECTORY"


def _word(enabled: bool) -> str:
    return "on" if enabled else "off"


def stored_toggle(root: Path) -> bool | None:
    """What config.json says, or None when it says nothing (recording is on by default)."""
    section = read_config(root).get("trajectory", {})
    value = section.get("enabled") if isinstance(section, dict) else None
    if value is None:
        return None
    if not isinstance(value, bool):
        raise ConfigError(f"config.json: 'trajectory.enabled' must be true or false, not {value!r}")
    return value


def effective(root: Path, env: Mapping[str, str]) -> tuple[bool, str]:
    """Whether recording is on, and where that comes from, in words."""
    stored = stored_toggle(root)
    raw = env.get(ENV_NAME, "")
    if raw:
        forced = parse_trajectory_env(raw)
        if forced is None:
            raise ConfigError(f"{ENV_NAME} must be on, off, 1 or 0, not {raw!r}")
        also = "" if stored is None else f"; stored: {_word(stored)}"
        return forced, f"{ENV_NAME}={raw} in your environment, which wins{also}"
    if stored is None:
        return True, "the default; nothing is stored in config.json"
    return stored, "stored in config.json"


def toggle_trajectory(root: Path, value: str | None, env: Mapping[str, str]) -> str:
    """Store ``on``/``off`` (or, with None, only report); returns the lines to show."""
    if value is None:
        enabled, source = effective(root, env)
        return f"recording is {_word(enabled)} ({source})"
    wanted = parse_trajectory_env(value)
    if wanted is None:
        raise SeriError(f"the trajectory toggle is on or off, not {value!r}")
    set_config_value(ensure_profile(root), "trajectory.enabled", wanted)
    lines = [f"stored: recording {_word(wanted)}"]
    raw = env.get(ENV_NAME, "")
    if raw:
        forced = parse_trajectory_env(raw)
        if forced is None:
            lines.append(
                f"but {ENV_NAME}={raw} in your environment is neither on nor off: "
                "fix or unset it, seri will not start with it"
            )
        elif forced != wanted:
            lines[0] = (
                f"stored: {_word(wanted)}, but {ENV_NAME}={raw} in your environment wins: "
                f"recording stays {_word(forced)} while it is set"
            )
        else:
            lines.append(f"({ENV_NAME}={raw} in your environment says the same, and wins)")
    return "\n".join(lines)
