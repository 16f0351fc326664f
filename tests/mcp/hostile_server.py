"""A scripted MCP server over stdio that misbehaves on purpose, one way per ``--mode``.

Standard library only, so it runs with the tests' own Python. It speaks the handshake era
(``initialize``) unless the mode says otherwise, and offers a few tools:

- ``echo {text}``: answers ``text``;
- ``boom``: writes a line to stderr and exits with status 3 halfway through the call;
- ``sleep {seconds}``: answers after that long (or never, with ``--mode hang``);
- ``big {bytes}``: answers that much text;
- ``environment``: answers the process environment as JSON;
- ``grow``: adds a tool and says so with ``notifications/tools/list_changed``;
- ``exit_soon``: answers, then exits a moment later (no call is running when it dies);
- ``raw {data}``: writes ``data`` (base64) to stdout as it is, then answers ``sent``;
- ``deep {depth}``: answers with ``structuredContent`` nested ``depth`` deep, and a text
  block holding JSON text nested 100,000 deep.

Modes: ``normal``, ``silent`` (reads, never writes), ``exit-at-start``, ``slow-start``
(``--delay`` seconds before it reads anything), ``hang`` (``sleep`` never answers),
``noisy`` (non-JSON lines on stdout and a flood on stderr), ``die-on-probe`` (exits when a
request comes before ``initialize``, as some old servers do), ``old-version`` (answers
``initialize`` with 2025-03-26), ``paginated`` (one tool per ``tools/list`` page),
``looping-cursor`` (its cursor never ends), ``modern-only`` (2026-07-28 only: ``_meta`` on every
request, ``initialize`` refused with -32022), ``future-only`` (knows only a version from the
future), ``asks-client`` (sends ``ping`` and ``roots/list`` to the client first),
``deep-schema`` (one more tool, ``nested``, whose ``inputSchema`` is nested 490 deep),
``many-tools`` (5,000 more tools, ``t0``…``t4999``, each with a 2 KB description of several
lines; calling one answers its name).

``--record FILE`` appends every message received (one JSON per line), so a test can see what
seri sent: a ``notifications/cancelled``, the answers to the server's own requests, ``_meta``.
``--pidfile FILE`` writes the server's pid there as it starts.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import threading
import time
from typing import Any

MODERN = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
TOOL_NAMES = ("echo", "boom", "sleep", "big", "environment", "grow", "exit_soon", "raw", "deep")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--record", default="")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--pidfile", default="")
    options = parser.parse_args()
    if options.pidfile:
        with open(options.pidfile, "w", encoding="ascii") as handle:
            handle.write(str(os.getpid()))
    Server(options.mode, options.record, options.delay).run()


class Server:
    def __init__(self, mode: str, record: str, delay: float) -> None:
        self.mode = mode
        self.record = record
        self.delay = delay
        self.initialized = False
        self.extra_tools: list[str] = []
        self.lock = threading.Lock()
        self.asked_client = False

    def run(self) -> None:
        if self.mode == "exit-at-start":
            sys.stderr.write("fatal: cannot open the database\n")
            sys.exit(2)
        if self.mode == "slow-start":
            time.sleep(self.delay)
        if self.mode == "noisy":
            sys.stderr.write("x" * 1_000_000 + "\n")
            sys.stderr.flush()
        for line in sys.stdin:
            if not line.strip():
                continue
            message = json.loads(line)
            self.note(message)
            if self.mode == "silent":
                continue
            if "method" in message and "id" in message:
                threading.Thread(target=self.handle, args=(message,), daemon=True).start()

    def note(self, message: dict[str, Any]) -> None:
        if self.record:
            with open(self.record, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(message) + "\n")

    def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message)
        with self.lock:
            if self.mode == "noisy":
                sys.stdout.write("Server log: handling a request\n")
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def answer(self, request_id: Any, result: dict[str, Any]) -> None:
        if self.mode == "modern-only":
            result = {**result, "resultType": "complete"}
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, text: str, data: Any = None) -> None:
        error: dict[str, Any] = {"code": code, "message": text}
        if data is not None:
            error["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": error})

    def handle(self, message: dict[str, Any]) -> None:
        method, request_id = message["method"], message["id"]
        params = message.get("params") or {}
        if self.mode in ("modern-only", "future-only"):
            self.handle_modern(method, request_id, params)
            return
        if method == "initialize":
            self.initialized = True
            version = "2025-03-26" if self.mode == "old-version" else "2025-11-25"
            self.answer(
                request_id,
                {
                    "protocolVersion": version,
                    "capabilities": {"tools": {"listChanged": True}},
                    "serverInfo": {"name": "hostile", "version": "1"},
                },
            )
            return
        if not self.initialized:
            if self.mode == "die-on-probe":
                sys.stderr.write("RuntimeError: request before initialization\n")
                os._exit(1)
            self.error(request_id, -32601, "Method not found")
            return
        self.serve(method, request_id, params)

    def handle_modern(self, method: str, request_id: Any, params: dict[str, Any]) -> None:
        supported = [MODERN] if self.mode == "modern-only" else ["2027-01-01"]
        meta = params.get("_meta") or {}
        if method == "initialize":
            self.error(
                request_id,
                -32022,
                "Unsupported protocol version",
                {"supported": supported, "requested": params.get("protocolVersion")},
            )
            return
        asked = meta.get(META_VERSION)
        if asked not in supported:
            self.error(
                request_id,
                -32022,
                "Unsupported protocol version",
                {"supported": supported, "requested": asked},
            )
            return
        if method == "server/discover":
            self.answer(
                request_id,
                {
                    "supportedVersions": supported,
                    "capabilities": {"tools": {}},
                    "cacheScope": "private",
                    "ttlMs": 0,
                    "_meta": {
                        "io.modelcontextprotocol/serverInfo": {
                            "name": "hostile-modern",
                            "version": "2",
                        }
                    },
                },
            )
            return
        self.serve(method, request_id, params)

    def serve(self, method: str, request_id: Any, params: dict[str, Any]) -> None:
        if self.mode == "asks-client" and not self.asked_client:
            self.asked_client = True
            self.send({"jsonrpc": "2.0", "id": "s1", "method": "ping"})
            self.send({"jsonrpc": "2.0", "id": "s2", "method": "roots/list"})
        if method == "tools/list":
            self.list_tools(request_id, params)
        elif method == "tools/call":
            self.call(request_id, params.get("name"), params.get("arguments") or {})
        else:
            self.error(request_id, -32601, "Method not found")

    def list_tools(self, request_id: Any, params: dict[str, Any]) -> None:
        names = [*TOOL_NAMES, *self.extra_tools]
        tools = [
            {
                "name": name,
                "description": f"the {name} tool",
                "inputSchema": {"type": "object", "properties": {}},
                "annotations": {"readOnlyHint": name == "echo"},
            }
            for name in names
        ]
        if self.mode == "many-tools":
            text = "Line one of a long description.\n" + "More words about the tool. " * 75
            tools += [
                {"name": f"t{n}", "description": f"t{n}: {text}", "inputSchema": {"type": "object"}}
                for n in range(5000)
            ]
        if self.mode == "deep-schema":
            schema: dict[str, Any] = {"type": "string"}
            for _ in range(245):  # two levels each: 490 deep
                schema = {"type": "object", "properties": {"x": schema}}
            tools.append({"name": "nested", "inputSchema": schema})
        if self.mode == "looping-cursor":
            self.answer(request_id, {"tools": tools[:1], "nextCursor": "again"})
            return
        if self.mode == "paginated":
            index = int(params.get("cursor") or 0)
            page: dict[str, Any] = {"tools": tools[index : index + 1]}
            if index + 1 < len(tools):
                page["nextCursor"] = str(index + 1)
            self.answer(request_id, page)
            return
        self.answer(request_id, {"tools": tools})

    def call(self, request_id: Any, name: Any, arguments: dict[str, Any]) -> None:
        if name == "echo":
            self.text(request_id, str(arguments.get("text", "")))
        elif name == "boom":
            sys.stderr.write("fatal: boom was called\n")
            sys.stderr.flush()
            os._exit(3)
        elif name == "sleep":
            if self.mode == "hang":
                return
            time.sleep(float(arguments.get("seconds", 1)))
            self.text(request_id, "slept")
        elif name == "big":
            size = int(arguments.get("bytes", 1000))
            self.text(request_id, ("0123456789abcde\n" * (size // 16 + 1))[:size])
        elif name == "environment":
            self.text(request_id, json.dumps(dict(os.environ)))
        elif name == "grow":
            self.extra_tools.append(f"grown_{len(self.extra_tools)}")
            self.text(request_id, "grown")
            self.send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        elif name == "raw":
            with self.lock:
                sys.stdout.buffer.write(base64.b64decode(str(arguments.get("data", ""))))
                sys.stdout.flush()
            self.text(request_id, "sent")
        elif name == "deep":
            depth = int(arguments.get("depth", 1000))
            nested: Any = "bottom"
            for _ in range(depth):
                nested = {"a": nested}
            text = "[" * 100_000 + "]" * 100_000
            self.answer(
                request_id,
                {"content": [{"type": "text", "text": text}], "structuredContent": nested},
            )
        elif self.mode == "many-tools" and str(name).startswith("t"):
            self.text(request_id, f"ran {name}")
        elif name == "exit_soon":
            self.text(request_id, "bye")
            threading.Timer(0.2, lambda: os._exit(0)).start()
        else:
            self.answer(
                request_id,
                {"content": [{"type": "text", "text": f"no tool {name}"}], "isError": True},
            )

    def text(self, request_id: Any, text: str) -> None:
        self.answer(request_id, {"content": [{"type": "text", "text": text}]})


if __name__ == "__main__":
    main()
