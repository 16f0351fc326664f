"""What a goal's check sees of the environment, on the installed seri under each sandbox
this machine has: the environment seri was started with (the person's shell's) less the
secrets, and nothing else but what the sandbox must change (a private temporary directory,
the cache directory inside it) and what bash sets itself.

Issue 27's speed target compares a check with the same command run from the person's shell
(scripts/bench/goal_check.py); a check that saw another PATH, another HOME or another
interpreter setting would be a different command, slower or not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI

KEY = "sk-or-v1-" + "7e1d" * 16
SECRETS = {
    "OPENROUTER_API_KEY": KEY,
    "GITHUB_TOKEN": "ghp_" + "Q3v9" * 9,
    "DATABASE_URL": "postgres://app:hunter2-in-the-url@db.internal:5432/app",
}
# What bash sets for itself, whoever starts it.
BASH_OWN = {"PWD", "SHLVL", "_", "OLDPWD"}
# What the sandbox must set: the writable temporary directory, and the cache directory
# inside it, since ~/.cache is outside the project and read-only there (docs/sandbox.md).
SANDBOX_OWN = {"TMPDIR", "XDG_CACHE_HOME"}


def _sandboxes() -> list[str]:
    from seri.io.permissions.sandbox import detect

    return ["none", *(k for k in ("bubblewrap", "landlock") if detect(k).kind == k)]


def _started_with(home: Path, fake: FakeModel, sandbox: str) -> dict[str, str]:
    """The person's environment: a few of this one's, settings of their own, and secrets."""
    kept = ("PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "PYENV_ROOT", "SSH_AUTH_SOCK")
    return {
        **{name: os.environ[name] for name in kept if name in os.environ},
        "SERI_HOME": str(home),
        "SERI_MODEL": "fake/model",
        "SERI_BASE_URL": fake.base_url,
        "SERI_SANDBOX": sandbox,
        "TZ": "UTC",
        "CHECK_SETTING": "kept as it is = yes",
        "PIP_INDEX_URL": "https://pypi.org/simple",
        **SECRETS,
    }


@pytest.mark.parametrize("sandbox", _sandboxes())
def test_a_check_sees_the_persons_environment_less_the_secrets(
    sandbox: str, seri_home: Path, project: Path
) -> None:
    check = "env -0 > check-env"
    with FakeModel([{"text": "done"}]) as fake:
        given = _started_with(seri_home, fake, sandbox)
        done = subprocess.run(
            [SERI, "chat", "-p", "go", "--until", check, "--max-checks", "1"],
            cwd=project,
            env=given,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    seen = dict(
        item.split("=", 1) for item in (project / "check-env").read_text().split("\0") if item
    )

    assert not set(SECRETS) & set(seen)
    assert not [v for v in seen.values() if any(s in v for s in SECRETS.values())]
    mine = {k: v for k, v in given.items() if k not in SECRETS}
    changed = {k for k in mine if seen.get(k) != mine[k]}
    added = set(seen) - set(mine)
    own = BASH_OWN | (SANDBOX_OWN if sandbox != "none" else set())
    assert changed <= own and added <= own, (changed, added)
    assert seen["PWD"] == str(project)
    if sandbox == "bubblewrap":
        assert (seen["TMPDIR"], seen["XDG_CACHE_HOME"]) == ("/tmp", "/tmp/.cache")
    elif sandbox == "landlock":
        assert Path(seen["TMPDIR"]).name.startswith("seri-tmp-")
        assert seen["XDG_CACHE_HOME"] == os.path.join(seen["TMPDIR"], ".cache")
