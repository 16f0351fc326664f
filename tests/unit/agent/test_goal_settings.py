"""config.json's `compaction.auto` and `goal.check_timeout`: their defaults, and a bad value
named with what it must be (a safety setting is never half read)."""

from __future__ import annotations

import pytest

from seri.pure.inputs.settings import DEFAULT_GOAL_CHECK_TIMEOUT, ConfigError, parse_settings


def test_defaults() -> None:
    settings = parse_settings({}, {})
    assert settings.compaction_auto is True
    assert settings.goal_check_timeout == DEFAULT_GOAL_CHECK_TIMEOUT == 600


def test_values_are_read() -> None:
    config = {"compaction": {"auto": False}, "goal": {"check_timeout": 2.5}}
    settings = parse_settings(config, {})
    assert (settings.compaction_auto, settings.goal_check_timeout) == (False, 2.5)


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ({"compaction": {"auto": "no"}}, "'compaction.auto' must be true or false, not 'no'"),
        ({"compaction": {"auto": 0}}, "'compaction.auto' must be true or false, not 0"),
        ({"goal": {"check_timeout": 0}}, "'goal.check_timeout' must be seconds above 0"),
        ({"goal": {"check_timeout": True}}, "'goal.check_timeout' must be seconds above 0"),
        ({"goal": {"check_timeout": 10**6}}, "at most 86400"),
    ],
)
def test_a_bad_value_is_named(config: dict[str, object], said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_settings(config, {})
    assert said in str(raised.value)
