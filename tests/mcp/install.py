"""Install the real MCP servers the tests talk to into .cache/mcp, pinned, once per checkout.

npm: ``@modelcontextprotocol/server-everything`` and ``server-filesystem`` from
``tests/mcp/servers/package-lock.json`` (``npm ci``). PyPI: ``mcp-server-git`` and the official
``mcp`` SDK it depends on (whose server also serves the tests' stateless-era HTTP endpoint),
from ``tests/mcp/servers/requirements.txt``, into a venv of their own so that seri's own
environment never contains the SDK. A stamp holding the lock file's hash skips work already
done; a file lock lets the two xdist workers share one install.

When an install fails, the registry is asked whether it is reachable at all: only then do the
tests skip (``Unavailable``), with the reason. Any other failure is an error.

``python -m tests.mcp.install`` (``make mcp-servers``) does the same ahead of time.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import attrs

REPO = Path(__file__).resolve().parents[2]
SPEC = Path(__file__).resolve().parent / "servers"
CACHE = REPO / ".cache" / "mcp"
INSTALL_TIMEOUT_SECONDS = 600


@attrs.frozen
class Servers:
    everything: Path
    filesystem: Path
    git: Path
    python: Path  # the servers' venv: has the official SDK for the stateless HTTP server


@attrs.frozen
class Unavailable:
    reason: str


class InstallError(RuntimeError):
    pass


def install(cache: Path = CACHE) -> Servers | Unavailable:
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for step in (_npm, _pypi):
            missing = step(cache)
            if missing is not None:
                return missing
    bin_npm, bin_py = cache / "npm" / "node_modules" / ".bin", cache / "py" / "bin"
    return Servers(
        everything=bin_npm / "mcp-server-everything",
        filesystem=bin_npm / "mcp-server-filesystem",
        git=bin_py / "mcp-server-git",
        python=bin_py / "python",
    )


def _npm(cache: Path) -> Unavailable | None:
    target = cache / "npm"
    lock = SPEC / "package-lock.json"
    if _stamped(target, lock):
        return None
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError("npm is not installed; the MCP tests need Node.js and npm")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.copy(SPEC / "package.json", target)
    shutil.copy(lock, target)
    done = _run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=target)
    if done.returncode != 0:
        if _run([npm, "ping"], cwd=target).returncode != 0:
            return Unavailable(f"the npm registry is unreachable: {_tail(done)}")
        raise InstallError(f"npm ci failed with the registry reachable: {_tail(done)}")
    _stamp(target, lock)
    return None


def _pypi(cache: Path) -> Unavailable | None:
    target = cache / "py"
    requirements = SPEC / "requirements.txt"
    if _stamped(target, requirements):
        return None
    shutil.rmtree(target, ignore_errors=True)
    base = getattr(sys, "_base_executable", sys.executable)
    created = _run([base, "-m", "venv", str(target)], cwd=cache)
    if created.returncode != 0:
        raise InstallError(f"cannot create the MCP servers' venv: {_tail(created)}")
    pip = str(target / "bin" / "pip")
    done = _run(
        [pip, "install", "-q", "--disable-pip-version-check", "-r", str(requirements)], cwd=cache
    )
    if done.returncode != 0:
        probe = _run(
            [pip, "download", "-q", "--no-deps", "-d", str(cache / "probe"), "six"], cwd=cache
        )
        shutil.rmtree(cache / "probe", ignore_errors=True)
        if probe.returncode != 0:
            return Unavailable(f"the Python package index is unreachable: {_tail(done)}")
        raise InstallError(f"pip install failed with the index reachable: {_tail(done)}")
    _stamp(target, requirements)
    return None


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stamped(target: Path, spec: Path) -> bool:
    stamp = target / ".seri-stamp"
    return stamp.exists() and stamp.read_text() == _digest(spec)


def _stamp(target: Path, spec: Path) -> None:
    (target / ".seri-stamp").write_text(_digest(spec))


def _run(argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_SECONDS,
        check=False,
    )


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return " ".join((done.stderr or done.stdout).split())[-600:]


if __name__ == "__main__":
    outcome = install()
    print(outcome)
    sys.exit(1 if isinstance(outcome, Unavailable) else 0)
