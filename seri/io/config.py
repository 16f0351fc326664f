"""Reading and writing ``$SERI_HOME/config.json``."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seri.pure.settings import ConfigError, Settings, parse_settings

CONFIG_NAME = "config.json"


def read_config(root: Path) -> dict[str, Any]:
    path = root / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
            "fix the file or move it aside"
        ) from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: must hold a JSON object")
    return value


def load_settings(root: Path, env: Mapping[str, str] | None = None) -> Settings:
    return parse_settings(read_config(root), os.environ if env is None else env)


def write_config(root: Path, config: Mapping[str, Any]) -> None:
    """Replace config.json atomically (temp file, fsync, rename), private to the user."""
    path = root / CONFIG_NAME
    fd, temp = tempfile.mkstemp(dir=root, prefix=".config.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o600)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def set_config_value(root: Path, dotted_key: str, value: Any) -> None:
    config = read_config(root)
    *parents, leaf = dotted_key.split(".")
    node = config
    for part in parents:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[leaf] = value
    write_config(root, config)
