"""Record what real MCP servers send, into tests/mcp/captures/wire/ (run by hand, then review).

Uses the servers tests/mcp/install.py puts in .cache/mcp and a raw client (plain pipes and
httpx, not seri's), so the files hold the servers' bytes as sent:
``.venv/bin/python -m scripts.mcp_capture``.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.mcp.install import Servers, install

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "tests" / "mcp" / "captures" / "wire"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "capture", "version": "0"},
}


class Pipe:
    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], 20)
            assert ready, f"no answer to {method}"
            answer = json.loads(self.proc.stdout.readline())
            if answer.get("id") == self.next_id:
                return answer  # type: ignore[no-any-return]

    def tell(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)


def save(name: str, value: Any) -> None:
    (OUT / name).write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_port(port: int) -> None:
    for _ in range(200):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"port {port} never opened")


def stdio_captures(servers: Servers) -> None:
    with tempfile.TemporaryDirectory() as repo:
        subprocess.run(["git", "init", "-q", repo], check=True)
        git = Pipe([str(servers.git), "--repository", repo])
        save("git-discover.json", git.ask("server/discover", {"_meta": META}))
        save("git-tools-list.json", git.ask("tools/list", {"_meta": META}))
        git.close()
    everything = Pipe([str(servers.everything), "stdio"])
    save("everything-discover.json", everything.ask("server/discover", {"_meta": META}))
    save("everything-initialize.json", everything.ask("initialize", INIT))
    everything.tell("notifications/initialized")
    save("everything-tiny-image.json", everything.ask("tools/call", {"name": "get-tiny-image"}))
    links = everything.ask("tools/call", {"name": "get-resource-links", "arguments": {"count": 2}})
    reference = everything.ask(
        "tools/call",
        {"name": "get-resource-reference", "arguments": {"resourceType": "Blob", "resourceId": 2}},
    )
    save("everything-resources.json", [links, reference])
    everything.close()
    with tempfile.TemporaryDirectory() as scratch:
        allowed = os.path.realpath(scratch)
        Path(allowed, "a.txt").write_text("hello from a file\n")
        fs = Pipe([str(servers.filesystem), allowed])
        fs.ask("initialize", INIT)
        fs.tell("notifications/initialized")
        read = {"name": "read_text_file", "arguments": {"path": f"{allowed}/a.txt"}}
        save("fs-structured.json", fs.ask("tools/call", read))
        fs.close()


def http_captures(servers: Servers) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    port = free_port()
    proc = subprocess.Popen(
        [str(servers.everything), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        url = f"http://127.0.0.1:{port}/mcp"
        modern = {**headers, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
        answer = httpx.post(url, headers=modern, json=body)
        save("everything-http-discover.json", {"status": answer.status_code, "body": answer.json()})
        hello = {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": INIT}
        opened = httpx.post(url, headers=headers, json=hello)
        session = {
            **headers,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        httpx.post(url, headers=session, json=initialized)
        call = {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {
                "name": "trigger-long-running-operation",
                "arguments": {"duration": 1, "steps": 2},
                "_meta": {"progressToken": 7},
            },
        }
        stream = httpx.post(url, headers=session, json=call, timeout=30)
        (OUT / "everything-sse-progress.txt").write_bytes(stream.content)
    finally:
        proc.terminate()
        proc.wait(10)
    port = free_port()
    sdk_server = REPO / "tests" / "mcp" / "servers" / "sdk_http_server.py"
    proc = subprocess.Popen(
        [str(servers.python), str(sdk_server), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        asked = {**META, "io.modelcontextprotocol/protocolVersion": "2027-01-01"}
        answer = httpx.post(
            f"http://127.0.0.1:{port}/mcp",
            headers={**headers, "MCP-Protocol-Version": "2027-01-01", "Mcp-Method": "tools/list"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": asked}},
        )
        save("sdk-unsupported-version.json", {"status": answer.status_code, "body": answer.json()})
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    servers = install()
    assert isinstance(servers, Servers), servers
    OUT.mkdir(parents=True, exist_ok=True)
    stdio_captures(servers)
    http_captures(servers)
    print(f"wrote {sorted(p.name for p in OUT.iterdir())}")


if __name__ == "__main__":
    main()
