"""Where seri looks for bubblewrap: PATH's absolute directories only.

seri starts inside a project it may not trust; with an empty or relative PATH entry (which
means the current directory) a `bwrap` the project ships must not become the sandbox.
Single: the lookup reads PATH, whoever runs seri.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seri.io.permissions.sandbox import detect


def _program(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "bwrap"
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_a_bwrap_in_the_current_directory_is_not_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    _program(project)
    installed = _program(tmp_path / "bin")
    monkeypatch.chdir(project)
    for path in ("", ".", "bin-relative"):
        monkeypatch.setenv("PATH", os.pathsep.join((path, str(installed.parent))))
        found = detect("bubblewrap", probe=False)
        assert found.kind == "bubblewrap"
        assert found.bwrap == str(installed), path


def test_no_bwrap_in_an_absolute_directory_is_no_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    _program(project)
    monkeypatch.chdir(project)
    monkeypatch.setenv("PATH", os.pathsep.join(("", ".", str(tmp_path / "empty"))))
    assert detect("bubblewrap", probe=False).kind != "bubblewrap"
