"""The context window from the server itself, over real HTTP: each server's own endpoint."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from seri.io.provider.provider import ProviderClient


class _Server(ThreadingHTTPServer):
    routes: Mapping[str, Any]


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _answer(self) -> None:
        payload = self.server.routes.get(f"{self.command} {self.path}")
        data = json.dumps(payload).encode()
        self.send_response(404 if payload is None else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._answer()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[_Server] = []

    def start(routes: Mapping[str, Any]) -> str:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.routes = routes
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _window(base_url: str, model: str) -> int | None:
    with ProviderClient(base_url, "none") as client:
        return client.context_window(model)


def test_llama_cpp_listing(serve: Any) -> None:
    listing = {"data": [{"id": "smollm2", "meta": {"n_ctx": 2048, "n_ctx_train": 8192}}]}
    assert _window(serve({"GET /v1/models": listing}), "smollm2") == 2048


def test_llama_cpp_props_when_the_listing_says_nothing(serve: Any) -> None:
    routes = {
        "GET /v1/models": {"data": []},
        "GET /props": {"default_generation_settings": {"n_ctx": 4096}},
    }
    assert _window(serve(routes), "any") == 4096


def test_ollama_show_when_neither_answers(serve: Any) -> None:
    show = {
        "parameters": 'num_ctx 16384\nstop "<|im_end|>"',
        "model_info": {"qwen2.context_length": 32768},
    }
    assert _window(serve({"POST /api/show": show}), "qwen2.5-coder") == 16384
    no_num_ctx = {"model_info": {"qwen2.context_length": 32768}}
    assert _window(serve({"POST /api/show": no_num_ctx}), "qwen2.5-coder") == 32768


def test_vllm_max_model_len(serve: Any) -> None:
    listing = {"data": [{"id": "a", "max_model_len": 32768}, {"id": "b", "max_model_len": 8192}]}
    assert _window(serve({"GET /v1/models": listing}), "b") == 8192


def test_nothing_known_is_none(serve: Any) -> None:
    listing = {"data": [{"id": "a"}, {"id": "b", "context_length": 1000}]}
    assert _window(serve({"GET /v1/models": listing}), "c") is None
