"""A scripted MCP endpoint over HTTP on loopback that misbehaves on purpose, one way per mode.

``python hostile_http_server.py MODE PORT [RECORD]``; standard library only. A handshake-era
server with one tool, ``echo``, answering with plain JSON bodies and no session id, except:

- ``unauthorized``: every POST gets 401 with a ``WWW-Authenticate`` header;
- ``silent``: reads each request and never answers;
- ``huge``: ``echo`` answers with a body of 3 MiB;
- ``asks-client``: ``tools/call`` answers with an event stream that first carries a ``ping``
  request from the server, then the response; the client's answer arrives as a POST of its
  own. Every POST is appended to RECORD with its ``X-Token`` and ``MCP-Protocol-Version``;
- ``no-answer-stream``: ``tools/call`` opens an event stream and closes it without a response;
- ``raw``: ``tools/call`` answers with the call's ``data`` (base64) as the whole body, of the
  content type its ``kind`` names (``text/event-stream`` or ``application/json``).
"""

from __future__ import annotations

import base64
import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODE = sys.argv[1]
RECORD = sys.argv[3] if len(sys.argv) > 3 else ""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_args: Any) -> None:
        return

    def do_DELETE(self) -> None:
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if RECORD:
            with open(RECORD, "a", encoding="utf-8") as handle:
                seen = {
                    "body": body,
                    "token": self.headers.get("X-Token"),
                    "version": self.headers.get("MCP-Protocol-Version"),
                }
                handle.write(json.dumps(seen) + "\n")
        if MODE == "unauthorized":
            self.reply(401, b"", extra={"WWW-Authenticate": 'Bearer realm="mcp"'})
            return
        if MODE == "silent":
            time.sleep(3600)
            return
        if "id" not in body or "method" not in body:
            self.reply(202, b"")
            return
        method, request_id = body["method"], body["id"]
        if method == "server/discover":
            self.json(
                400,
                {
                    "jsonrpc": "2.0",
                    "id": None,
                    "error": {"code": -32000, "message": "Bad Request: Server not initialized"},
                },
            )
        elif method == "initialize":
            self.json(
                200,
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "hostile-http", "version": "1"},
                    },
                },
            )
        elif method == "tools/list":
            self.json(
                200,
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "result": {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]},
                },
            )
        elif method == "tools/call":
            self.call(request_id, body["params"].get("arguments") or {})
        else:
            self.json(
                404,
                {
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "error": {"code": -32601, "message": "Method not found"},
                },
            )

    def call(self, request_id: Any, arguments: dict[str, Any]) -> None:
        if MODE == "raw":
            data = base64.b64decode(str(arguments.get("data", "")))
            self.reply(200, data, kind=str(arguments.get("kind", "application/json")))
            return
        text = str(arguments.get("text", ""))
        answer = {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {"content": [{"type": "text", "text": text}]},
        }
        if MODE == "huge":
            answer["result"]["content"][0]["text"] = "x" * (3 * 1024 * 1024)
        if MODE in ("asks-client", "no-answer-stream"):
            events = []
            if MODE == "asks-client":
                events.append({"jsonrpc": "2.0", "id": "srv-1", "method": "ping"})
                events.append(answer)
            payload = b"".join(
                b"event: message\ndata: " + json.dumps(e).encode() + b"\n\n" for e in events
            )
            self.reply(200, b"id: 0\ndata: \n\n" + payload, kind="text/event-stream")
            return
        self.json(200, answer)

    def json(self, status: int, value: Any) -> None:
        self.reply(status, json.dumps(value).encode(), kind="application/json")

    def reply(
        self, status: int, data: bytes, kind: str = "", extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if kind:
            self.send_header("Content-Type", kind)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[2])), Handler).serve_forever()
