"""Programs the terminal tests need beyond Python: installed when missing, never skipped.

`make test` installs them first (the Makefile's test-programs target); running pytest by
hand on a fresh machine gets the same here, as root through apt-get. Anything else fails
the test with what to install, rather than skipping it silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def require_program(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env, capture_output=True)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", name], check=False, env=env, capture_output=True
        )
        found = shutil.which(name)
        if found:
            return found
    pytest.fail(f"{name} is needed for this test: install it (Debian: apt-get install {name})")
