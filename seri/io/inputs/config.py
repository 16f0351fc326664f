"""Reading and writing ``$SERI_HOME/config.json``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from seri.pure.inputs import json_text
from seri.pure.inputs.bounded_input import (
    CONFIG_FILE,
    BoundedInputError,
    InputLimits,
    total_too_big,
)
from seri.pure.inputs.settings import DEFAULT_BASE_URL, ConfigError, Settings, parse_settings

CONFIG_NAME = "config.json"


def read_bounded_text(path: Path, limits: InputLimits) -> str:
    """A small settings file's text, read no further than its source's size limit (a
    ``BoundedInputError`` past it: a file of gigabytes is not read into memory first).
    OSError and UnicodeDecodeError as reading raises them."""
    with path.open("rb") as handle:
        data = handle.read(limits.max_total_bytes + 1)
    if len(data) > limits.max_total_bytes:
        raise total_too_big(limits)
    return data.decode("utf-8")


def read_config(root: Path) -> dict[str, Any]:
    path = root / CONFIG_NAME
    try:
        text = read_bounded_text(path, CONFIG_FILE)
    except FileNotFoundError:
        return {}
    except BoundedInputError as exc:
        raise ConfigError(f"{path}: {exc.reason}; fix the file or move it aside") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    try:
        value = json_text.loads_bounded(text, CONFIG_FILE)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}); "
            "fix the file or move it aside"
        ) from exc
    except BoundedInputError as exc:
        raise ConfigError(f"{path}: not JSON seri can read: {exc.reason}; fix the file") from exc
    except ValueError as exc:
        raise ConfigError(f"{path}: not JSON seri can read: {exc}; fix the file") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: must hold a JSON object")
    return value


def load_settings(root: Path, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    settings = parse_settings(read_config(root), env)
    check_base_url(settings.base_url, settings.base_url_source)
    return settings


def check_base_url(value: str, source: str) -> None:
    """An http(s) URL with a host, or a usage error naming the setting that chose it (no
    request is tried: retrying a URL that can never work only wastes a minute)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
        valid = valid and (parts.port is None or parts.port > 0)
    except ValueError:
        valid = False
    if not valid or any(ch.isspace() for ch in value):
        raise ConfigError(
            f"the base URL {value!r} ({source}) must be an http:// or https:// URL with a "
            f"host, such as {DEFAULT_BASE_URL}"
        )


def write_config(root: Path, config: Mapping[str, Any]) -> None:
    """Replace config.json atomically (temp file, fsync, rename), private to the user.

    A disk that is full, a file-size limit, an immutable or read-only file: one line that
    names the file, and the old config.json is left whole.
    """
    path = root / CONFIG_NAME
    try:
        _replace(root, path, config)
    except OSError as exc:
        from seri.io.session.store_errors import store_error

        raise store_error(
            f"cannot write {path} ({exc.strerror or exc}); it was left as it was", exc
        ) from exc


def _replace(root: Path, path: Path, config: Mapping[str, Any]) -> None:
    import tempfile  # here: it loads shutil, bz2 and lzma, which reading config never needs

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
