"""The recording toggle: stored in config.json, overridden by SERI_TRAJECTORY, and saying so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seri.io.inputs.config import load_settings
from seri.pure.inputs.errors import SeriError
from seri.runtime.trajectories.trajectory_toggle import effective, toggle_trajectory
from tests.conftest import RunSeri
from tests.trajectory_seed import session_with_run, store_at


def stored(home: Path) -> object:
    return json.loads((home / "config.json").read_text())["trajectory"]["enabled"]


def test_recording_is_on_by_default(run_seri: RunSeri) -> None:
    done = run_seri("trajectory", "status")

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "recording  on (the default; nothing is stored in config.json)"
    )
    assert "retention  30 days" in done.stdout
    assert "recorded   nothing yet" in done.stdout


def test_off_and_on_are_stored_and_status_reports_them(run_seri: RunSeri, seri_home: Path) -> None:
    off = run_seri("trajectory", "off")

    assert off.returncode == 0, off.stderr
    assert off.stderr == "stored: recording off\n"
    assert off.stdout == ""
    assert stored(seri_home) is False
    assert load_settings(seri_home, {}).trajectory_enabled is False
    assert "recording  off (stored in config.json)" in run_seri("trajectory", "status").stdout

    on = run_seri("trajectory", "on")
    assert on.stderr == "stored: recording on\n"
    assert stored(seri_home) is True


def test_setting_the_toggle_against_the_environment_says_the_environment_wins(
    run_seri: RunSeri, seri_home: Path
) -> None:
    done = run_seri("trajectory", "off", env={"SERI_TRAJECTORY": "on"})

    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("stored: off, but SERI_TRAJECTORY=on in your environment wins")
    assert stored(seri_home) is False
    status = run_seri("trajectory", "status", env={"SERI_TRAJECTORY": "on"})
    assert status.stdout.splitlines()[0] == (
        "recording  on (SERI_TRAJECTORY=on in your environment, which wins; stored: off)"
    )
    # And at the next start the variable still wins over what was stored.
    assert load_settings(seri_home, {"SERI_TRAJECTORY": "on"}).trajectory_enabled is True

    zero = run_seri("trajectory", "on", env={"SERI_TRAJECTORY": "0"})
    assert "stored: on, but SERI_TRAJECTORY=0 in your environment wins" in zero.stderr
    assert "recording stays off" in zero.stderr


def test_an_agreeing_variable_is_mentioned_without_alarm(seri_home: Path) -> None:
    seri_home.mkdir()
    lines = toggle_trajectory(seri_home, "on", {"SERI_TRAJECTORY": "1"}).splitlines()

    assert lines == [
        "stored: recording on",
        "(SERI_TRAJECTORY=1 in your environment says the same, and wins)",
    ]


def test_the_slash_command_without_an_argument_reports(seri_home: Path) -> None:
    seri_home.mkdir()
    assert toggle_trajectory(seri_home, None, {}) == (
        "recording is on (the default; nothing is stored in config.json)"
    )
    toggle_trajectory(seri_home, "off", {})
    assert toggle_trajectory(seri_home, None, {}) == "recording is off (stored in config.json)"
    assert toggle_trajectory(seri_home, None, {"SERI_TRAJECTORY": "on"}) == (
        "recording is on (SERI_TRAJECTORY=on in your environment, which wins; stored: off)"
    )


def test_the_toggle_keeps_the_rest_of_config(seri_home: Path) -> None:
    seri_home.mkdir()
    (seri_home / "config.json").write_text(
        json.dumps({"model": "x/y", "trajectory": {"retention_days": 7}})
    )

    toggle_trajectory(seri_home, "off", {})

    config = json.loads((seri_home / "config.json").read_text())
    assert config == {"model": "x/y", "trajectory": {"retention_days": 7, "enabled": False}}


def test_bad_values_are_refused(seri_home: Path) -> None:
    seri_home.mkdir()
    with pytest.raises(SeriError, match="on or off"):
        toggle_trajectory(seri_home, "sometimes", {})
    assert not (seri_home / "config.json").exists()
    with pytest.raises(SeriError, match="SERI_TRAJECTORY"):
        effective(seri_home, {"SERI_TRAJECTORY": "maybe"})
    warned = toggle_trajectory(seri_home, "on", {"SERI_TRAJECTORY": "maybe"})
    assert "neither on nor off" in warned


def test_status_counts_what_is_recorded(run_seri: RunSeri, seri_home: Path) -> None:
    store = store_at(seri_home)
    session_with_run(store, "a" * 32, 1_767_225_600.0, events=4)
    session_with_run(store, "b" * 32, 1_767_225_700.0, events=2)
    store.close()
    (seri_home / "config.json").write_text(json.dumps({"trajectory": {"retention_days": 7.5}}))

    done = run_seri("trajectory", "status")

    assert done.returncode == 0, done.stderr
    assert "retention  7.5 days after a session's last record" in done.stdout
    assert "recorded   2 runs in 2 sessions, 6 events" in done.stdout
