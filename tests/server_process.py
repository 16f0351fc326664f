"""Servers the test tiers start as processes of their own: a free loopback port for one, and
stopping one by its pid, politely first."""

from __future__ import annotations

import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(process: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM, then SIGKILL if it has not ended within ``grace`` seconds."""
    process.terminate()
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_healthy(process: subprocess.Popen[bytes], url: str, seconds: float) -> str:
    """Wait until ``url`` answers 200: "" when it does, else why not (the process ended, or
    the time ran out)."""
    import httpx  # the tiers that start servers have it; the module's other users need not

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return f"it exited with {process.returncode}"
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return ""
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    return f"it did not answer {url} within {seconds:g} s"
