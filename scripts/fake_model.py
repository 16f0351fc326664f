"""A scripted OpenAI-compatible model server on loopback, for tests and the offline demo.

Standard library only, so it starts in a few milliseconds and needs nothing installed.

As a program::

    python scripts/fake_model.py --script steps.json [--port 0] [--port-file PATH]
        [--log-requests requests.jsonl] [--context-length 200000] [--model ID]...
        [--enforce-context] [--token-ratio R] [--overflow-style STYLE] [--auto-recap]

As a library::

    from scripts.fake_model import FakeModel
    with FakeModel([{"text": "hello"}]) as fake:
        ...  # point the client at fake.base_url; fake.requests holds the bodies received

The base URL is ``http://127.0.0.1:PORT/v1`` (``/api/v1`` works too). ``POST
.../chat/completions`` consumes the script's steps in order; once they run out it answers
"(script exhausted)". ``GET .../models`` lists the models with their ``context_length``.

A step is a JSON object; every key is optional:

``text``, ``reasoning``, ``reasoning_details`` (list), ``tool_calls``
    A normal answer. Each tool call is ``{"id", "name", "arguments"}`` where ``arguments`` is an
    object (sent as JSON text) or a raw string (sent as is, valid JSON or not).
``text_from_last_user``
    true: answer with the text of the last user message.
``finish_reason``
    Default ``tool_calls`` when there are tool calls, else ``stop``; ``null`` sends none.
``usage``
    Merged over a computed usage object (``prompt_tokens``, ``completion_tokens``, ``cost``...).
``provider``
    The top-level ``provider`` name (default ``FakeProvider``).
``done``
    false: omit the final ``data: [DONE]``.
``reasoning_field``
    ``reasoning`` (default) or ``reasoning_content`` (llama.cpp / DeepSeek style).
``piece_chars``, ``split_bytes``, ``line_ending``
    Text and arguments go out in pieces of ``piece_chars`` characters (default 4); the SSE bytes
    are written in HTTP chunks of ``split_bytes`` bytes (default 7), so a chunk can end inside a
    line or a UTF-8 character; ``line_ending`` is ``"\\n"`` (default), ``"\\r\\n"`` or ``"\\r"``.
``status``, ``headers``, ``body``
    An HTTP error instead of an answer: ``{"status": 429, "headers": {"Retry-After": "1"}}``.
    ``body`` is an object (sent as JSON) or a string; the default is OpenRouter's envelope.
``overflow``
    true: OpenRouter's own 400 "maximum context length" error.
``cut_after_chunks``
    Send that many data events, then close the socket with no finish and no ``[DONE]``.
``stall_seconds``, ``stall_after_chunks``, ``stall_interval``
    After ``stall_after_chunks`` data events (default 0), send only ``: OPENROUTER PROCESSING``
    comments every ``stall_interval`` s (default 0.1) for ``stall_seconds``, then close.
``drip_interval``
    Write the stream one byte at a time (``split_bytes`` at a time when given), this many
    seconds apart.
``silent_seconds``
    After the headers, send nothing at all (not even a comment) for this long: a local
    server reading a long prompt without being asked for progress.
``prompt_progress``, ``progress_interval``
    Before the answer, one llama.cpp progress chunk per object of this list (``{"total": ..,
    "cache": .., "processed": .., "time_ms": ..}``), ``progress_interval`` s apart (default
    0.1), with no comments between them: llama.cpp reading a prompt with ``return_progress``.
``error_chunk``
    After the text, an OpenRouter mid-stream error event: ``{"error": <this object>,
    "choices": [{"finish_reason": "error", ...}]}``; the stream then ends (no ``[DONE]``).
``vllm_error``
    After the text, vLLM's unwrapped ``{"object": "error", "message": <this string>}`` event.
``raw_sse``
    Send this text as the whole stream body, byte for byte.
``repeat``
    Serve this step that many times (default 1).

With ``stream: false`` in the request the same step is answered as one JSON body.

Counting tokens like a real provider
------------------------------------

By default a prompt counts ``len(json.dumps(messages)) // 4`` tokens. With ``token_ratio`` R
(``--token-ratio``) the fake counts like a tokenizer R times denser than four characters a
token, the way a real server counts the whole prompt: ``ceil(R * ceil(chars / 4))`` over the
message texts, reasoning, tool-call names and arguments and the JSON of the tool definitions,
plus 3 tokens a message and 3 for the reply (the chat template's framing). A ``Utf8Ratio``
counts UTF-8 bytes instead of characters (Cyrillic twice, CJK three times as dense). That
count is what ``usage.prompt_tokens`` reports, and with ``enforce_context`` a request whose
count plus its ``max_tokens`` is over ``context_length`` is refused, whatever the step, in
the words of ``overflow_style``:

``openrouter`` (default)
    OpenRouter's 400: "This endpoint's maximum context length is L tokens. However, you
    requested about N tokens (P of text input, O in the output). ..."
``llamacpp``
    llama-server's 400 (ggml-org/llama.cpp, tools/server/server-context.cpp):
    ``{"error": {"code": 400, "message": "request (P tokens) exceeds the available context size
    (L tokens), try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": P,
    "n_ctx": L}}``
``openai``
    OpenAI's 400 ``context_length_exceeded``: "This model's maximum context length is L tokens.
    However, your messages resulted in P tokens. Please reduce the length of the messages."

``auto_recap`` (``--auto-recap``): a request without ``tools`` (compaction's summarizer) is
answered with a recap without consuming a step: the previous recap's goal if the request
carries one, else the first line of the first user message in the transcript; one progress
item naming how many messages it read; streamed in 64-character pieces and 509-byte chunks.
Turns keep the script to themselves.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

STEP_KEYS = frozenset(
    {
        "text",
        "reasoning",
        "reasoning_details",
        "tool_calls",
        "text_from_last_user",
        "finish_reason",
        "usage",
        "provider",
        "done",
        "reasoning_field",
        "piece_chars",
        "split_bytes",
        "line_ending",
        "status",
        "headers",
        "body",
        "overflow",
        "context_length",
        "cut_after_chunks",
        "stall_seconds",
        "stall_after_chunks",
        "stall_interval",
        "drip_interval",
        "silent_seconds",
        "prompt_progress",
        "progress_interval",
        "error_chunk",
        "vllm_error",
        "raw_sse",
        "repeat",
    }
)

EXHAUSTED = {"text": "(script exhausted)"}
COMMENT = ": OPENROUTER PROCESSING"
DEFAULT_CONTEXT_LENGTH = 200_000
DEFAULT_MODELS = ("fake/model",)

_REASONS = {
    400: "Bad request",
    401: "No auth credentials found",
    402: "Insufficient credits. Add more using https://openrouter.ai/credits",
    403: "Forbidden",
    404: "No endpoints found for this model",
    408: "Request timed out",
    413: "Payload too large",
    429: "Rate limit exceeded",
    500: "Internal Server Error",
    502: "Provider returned error",
    503: "No available model provider that meets your routing requirements",
}


def check_steps(steps: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The steps with ``repeat`` expanded; a misspelt key fails loudly instead of being ignored."""
    expanded: list[dict[str, Any]] = []
    for number, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise ValueError(f"step {number} is not an object: {step!r}")
        unknown = sorted(set(step) - STEP_KEYS)
        if unknown:
            raise ValueError(f"step {number} has unknown keys: {', '.join(unknown)}")
        body = {key: value for key, value in step.items() if key != "repeat"}
        expanded.extend(dict(body) for _ in range(int(step.get("repeat", 1))))
    return expanded


def estimate_tokens(value: object) -> int:
    return max(1, len(json.dumps(value, ensure_ascii=False)) // 4)


OVERFLOW_STYLES = ("openrouter", "llamacpp", "openai")
# A chat template's framing: tokens around every message, and those that prime the reply.
TOKENS_PER_MESSAGE = 3
TOKENS_FOR_REPLY = 3


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


class Utf8Ratio(float):
    """A ``token_ratio`` that counts UTF-8 bytes instead of characters: ``ceil(R *
    ceil(bytes / 4))``, a tokenizer for which Cyrillic is twice and CJK three times as dense
    as English (as real ones roughly are)."""


def prompt_chars(body: Mapping[str, Any], size: Callable[[str], int] = len) -> int:
    """The characters a tokenizer reads in a request: texts, calls and the tool definitions
    (``size`` measures a text: ``len``, or its UTF-8 bytes)."""
    chars = 0
    messages = body.get("messages") or []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        chars += size(_content_text(message.get("content")))
        chars += size(str(message.get("reasoning") or message.get("reasoning_content") or ""))
        for call in message.get("tool_calls") or []:
            function = (call.get("function") or {}) if isinstance(call, Mapping) else {}
            name, arguments = function.get("name") or "", function.get("arguments") or ""
            chars += size(str(name)) + size(str(arguments))
    tools = body.get("tools")
    if tools:
        chars += size(json.dumps(tools, ensure_ascii=False))
    return chars


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def count_prompt_tokens(body: Mapping[str, Any], ratio: float | None) -> int:
    """The prompt's tokens as this fake's tokenizer counts them (see "Counting tokens")."""
    if ratio is None:
        return estimate_tokens(body.get("messages"))
    size = _utf8_bytes if isinstance(ratio, Utf8Ratio) else len
    base = -(-prompt_chars(body, size) // 4)
    messages = body.get("messages") or []
    framing = TOKENS_PER_MESSAGE * len(messages) + TOKENS_FOR_REPLY
    return int(-(-(ratio * base) // 1)) + framing


def overflow_body(style: str, limit: int, prompt: int, output: int) -> dict[str, Any]:
    """A provider's refusal of a prompt of ``prompt`` tokens for a window of ``limit``."""
    if style == "llamacpp":
        message = (
            f"request ({prompt} tokens) exceeds the available context size ({limit} tokens), "
            "try increasing it"
        )
        error: dict[str, Any] = {
            "code": 400,
            "message": message,
            "type": "exceed_context_size_error",
            "n_prompt_tokens": prompt,
            "n_ctx": limit,
        }
        return {"error": error}
    if style == "openai":
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {prompt} tokens. Please reduce the length of the messages."
        )
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    message = (
        f"This endpoint's maximum context length is {limit} tokens. However, you requested "
        f"about {prompt + output} tokens ({prompt} of text input, {output} in the output). "
        'Please reduce the length of either one, or use the "middle-out" transform to '
        "compress your prompt automatically."
    )
    return {"error": {"code": 400, "message": message, "metadata": {"provider_name": None}}}


_HISTORY_COUNT = re.compile(r"The history to summarize \((\d+) messages\)")
_PREVIOUS_GOAL = re.compile(r'The previous recap, to update[^{]*\{\s*"goal": (".*?(?<!\\)")', re.S)
_FIRST_USER = re.compile(r"<history>\n(?:.*?\n\n)??\[user\]\n(.*?)(?:\n|$)", re.S)


def recap_answer(body: Mapping[str, Any]) -> str:
    """What ``auto_recap`` answers a summarizer request with (a plain recap JSON)."""
    text = _last_user_text(body)
    previous = _PREVIOUS_GOAL.search(text)
    if previous is not None:
        goal = json.loads(previous.group(1))
    else:
        first = _FIRST_USER.search(text)
        goal = first.group(1).strip()[:200] if first is not None else ""
    count = _HISTORY_COUNT.search(text)
    read = count.group(1) if count is not None else "some"
    answer = {
        "goal": goal,
        "progress": [f"read {read} messages"],
        "blockers": [],
        "next_steps": ["carry on with the goal"],
    }
    return json.dumps(answer)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def _arguments_text(arguments: object) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _last_user_text(body: Mapping[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


class _State:
    """What the server threads share: the script, the log of requests, the settings."""

    def __init__(
        self,
        steps: Sequence[Mapping[str, Any]],
        *,
        context_length: int,
        models: Sequence[str],
        log_path: Path | None,
        enforce_context: bool,
        token_ratio: float | None = None,
        overflow_style: str = "openrouter",
        auto_recap: bool = False,
    ) -> None:
        if overflow_style not in OVERFLOW_STYLES:
            raise ValueError(f"overflow_style must be one of {OVERFLOW_STYLES}: {overflow_style}")
        self.lock = threading.Lock()
        self.steps = check_steps(steps)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.context_length = context_length
        self.models = tuple(models)
        self.log_path = log_path
        self.enforce_context = enforce_context
        self.token_ratio = token_ratio
        self.overflow_style = overflow_style
        self.auto_recap = auto_recap
        self.stopping = threading.Event()
        self.served = 0
        self.refused = 0

    def record(self, body: dict[str, Any], headers: dict[str, str]) -> int:
        with self.lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.served += 1
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(body, ensure_ascii=False) + "\n")
            return self.served

    def next_step(self) -> dict[str, Any]:
        with self.lock:
            return self.steps.pop(0) if self.steps else dict(EXHAUSTED)

    def add(self, steps: Sequence[Mapping[str, Any]]) -> None:
        checked = check_steps(steps)
        with self.lock:
            self.steps.extend(checked)

    def replace(self, steps: Sequence[Mapping[str, Any]]) -> None:
        checked = check_steps(steps)
        with self.lock:
            self.steps = checked


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up (a watchdog firing, a test ending) is normal here, not news.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class _ClientGoneError(Exception):
    """The client closed the connection; stop writing."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        # Quiet: test output is for test failures.
        return

    # --- routing ----------------------------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            state = self.server.state
            models = [
                {
                    "id": model,
                    "name": model,
                    "context_length": state.context_length,
                    "top_provider": {"context_length": state.context_length},
                    "supported_parameters": ["tools", "reasoning", "temperature", "max_tokens"],
                }
                for model in state.models
            ]
            self._json(200, {"data": models})
        else:
            self._json(404, {"error": {"code": 404, "message": f"no route {path}"}})

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not path.endswith("/chat/completions"):
            self._json(404, {"error": {"code": 404, "message": f"no route {path}"}})
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self._json(400, {"error": {"code": 400, "message": "body is not JSON"}})
            return
        state = self.server.state
        number = state.record(body, {k.lower(): v for k, v in self.headers.items()})
        if state.enforce_context and self._over_window(body):
            with state.lock:
                state.refused += 1
            self._overflow(body, {}, number)
            return
        if state.auto_recap and "tools" not in body:
            # In 64-character pieces and ~0.5 KB HTTP chunks, not 4 and 7: a compaction of a
            # long session makes hundreds of summarizer calls, and at 7 bytes a chunk their
            # answers cost more CPU (both ends' per-chunk work) than the rest of the test. The
            # chunks still end inside lines; the turns keep the fine split.
            step: dict[str, Any] = {
                "text": recap_answer(body),
                "piece_chars": 64,
                "split_bytes": 509,
            }
        else:
            step = state.next_step()
        try:
            self._answer(step, body, number)
        except _ClientGoneError:
            self.close_connection = True

    def _answer(self, step: dict[str, Any], body: Mapping[str, Any], number: int) -> None:
        if "status" in step:
            self._error(step)
        elif step.get("overflow"):
            self._overflow(body, step, number)
        elif body.get("stream"):
            self._stream(step, body, number)
        else:
            self._complete(step, body, number)

    # --- plain answers ----------------------------------------------------------------------

    def _json(self, status: int, payload: object, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, str(value))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, step: Mapping[str, Any]) -> None:
        status = int(step["status"])
        body = step.get("body")
        if body is None:
            body = {"error": {"code": status, "message": _REASONS.get(status, "Error")}}
        if isinstance(body, str):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (step.get("headers") or {}).items():
                self.send_header(name, str(value))
            self.end_headers()
            self.wfile.write(data)
        else:
            self._json(status, body, step.get("headers"))

    def _over_window(self, body: Mapping[str, Any]) -> bool:
        state = self.server.state
        prompt = count_prompt_tokens(body, state.token_ratio)
        output = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        return prompt + output > state.context_length

    def _overflow(self, body: Mapping[str, Any], step: Mapping[str, Any], number: int) -> None:
        state = self.server.state
        limit = int(step.get("context_length") or state.context_length)
        prompt = max(count_prompt_tokens(body, state.token_ratio), limit + 1)
        output = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        self._json(400, overflow_body(state.overflow_style, limit, prompt, output))

    def _complete(self, step: Mapping[str, Any], body: Mapping[str, Any], number: int) -> None:
        if "cut_after_chunks" in step:
            self._hang_up()
            return
        if "stall_seconds" in step:
            self._wait(float(step["stall_seconds"]))
            self._hang_up()
            return
        answer = _Answer(step, body, number, self.server.state.token_ratio)
        choice: dict[str, Any] = {
            "index": 0,
            "finish_reason": answer.finish_reason,
            "native_finish_reason": answer.finish_reason,
            "message": answer.message(),
        }
        if "error_chunk" in step:
            choice["error"] = step["error_chunk"]
            choice["finish_reason"] = "error"
        payload = {**answer.envelope("chat.completion"), "choices": [choice]}
        payload["usage"] = answer.usage()
        self._json(200, payload)

    # --- streams ----------------------------------------------------------------------------

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def _write(self, data: bytes) -> None:
        if not data:
            return
        try:
            self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGoneError from exc

    def _end_stream(self) -> None:
        try:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError as exc:
            raise _ClientGoneError from exc

    def _hang_up(self) -> None:
        # No terminating zero-length chunk: the client sees the body end early, as in a cut.
        with contextlib.suppress(OSError):
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        self.close_connection = True

    def _wait(self, seconds: float) -> None:
        self.server.state.stopping.wait(seconds)

    def _stream(self, step: Mapping[str, Any], body: Mapping[str, Any], number: int) -> None:
        self._start_stream()
        if "silent_seconds" in step:
            self._wait(float(step["silent_seconds"]))
        for progress in step.get("prompt_progress") or ():
            self._send(step, _progress_frame(number, progress))
            self._wait(float(step.get("progress_interval", 0.1)))
        if "raw_sse" in step:
            self._send(step, str(step["raw_sse"]).encode())
            self._end_stream()
            return
        answer = _Answer(step, body, number, self.server.state.token_ratio)
        ending = str(step.get("line_ending", "\n"))
        events = answer.events()
        cut = step.get("cut_after_chunks")
        stall = step.get("stall_seconds")
        limit = len(events)
        if cut is not None:
            limit = int(cut)
        elif stall is not None:
            limit = int(step.get("stall_after_chunks", 0))
        self._send(step, (COMMENT + ending + ending).encode())
        for event in events[:limit]:
            frame = "data: " + event + ending + ending + COMMENT + ending + ending
            self._send(step, frame.encode())
        if stall is not None:
            interval = float(step.get("stall_interval", 0.1))
            deadline = time.monotonic() + float(stall)
            while time.monotonic() < deadline and not self.server.state.stopping.is_set():
                self._send(step, (COMMENT + ending + ending).encode())
                self._wait(interval)
            self._hang_up()
            return
        if limit < len(events):
            self._hang_up()
            return
        self._end_stream()

    def _send(self, step: Mapping[str, Any], data: bytes) -> None:
        drip = step.get("drip_interval")
        size = int(step.get("split_bytes", 1 if drip is not None else 7))
        for start in range(0, len(data), size):
            self._write(data[start : start + size])
            if drip is not None:
                self._wait(float(drip))


def _progress_frame(number: int, progress: Mapping[str, Any]) -> bytes:
    """A prompt-progress chunk in the shape llama.cpp's server sends it (janhq/jan quotes one
    in extensions/llamacpp-extension/src/index.ts; tools/server/server-task.cpp writes it)."""
    chunk = {
        "choices": [
            {"finish_reason": None, "index": 0, "delta": {"role": "assistant", "content": None}}
        ],
        "created": 1758113912,
        "id": f"chatcmpl-fake-{number}",
        "model": "qwen",
        "system_fingerprint": "b1-e4912fc",
        "object": "chat.completion.chunk",
        "prompt_progress": dict(progress),
    }
    return f"data: {json.dumps(chunk, separators=(',', ':'))}\n\n".encode()


class _Answer:
    """One scripted answer, rendered as stream chunks or as a whole completion."""

    def __init__(
        self,
        step: Mapping[str, Any],
        body: Mapping[str, Any],
        number: int,
        token_ratio: float | None = None,
    ) -> None:
        self.step = step
        self.body = body
        self.token_ratio = token_ratio
        self.id = f"gen-fake-{number}"
        self.model = str(body.get("model") or DEFAULT_MODELS[0])
        self.provider = str(step.get("provider", "FakeProvider"))
        text = _last_user_text(body) if step.get("text_from_last_user") else step.get("text")
        if "cut_after_chunks" in step and not text and not step.get("tool_calls"):
            text = "a partial answer that will be cut off before it ends"
        self.text = str(text or "")
        self.reasoning = str(step.get("reasoning") or "")
        self.details: list[Any] = list(step.get("reasoning_details") or [])
        self.calls: list[dict[str, Any]] = [
            {
                "id": str(call.get("id") or f"call_{number}_{n}"),
                "name": str(call["name"]),
                "arguments": _arguments_text(call.get("arguments", {})),
            }
            for n, call in enumerate(step.get("tool_calls") or [])
        ]
        default_finish = "tool_calls" if self.calls else "stop"
        self.finish_reason: str | None = step.get("finish_reason", default_finish)

    def envelope(self, kind: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": kind,
            "created": 1_700_000_000,
            "model": self.model,
            "provider": self.provider,
        }

    def usage(self) -> dict[str, Any]:
        completion = (len(self.text) + sum(len(c["arguments"]) for c in self.calls)) // 4 + 1
        reasoning = len(self.reasoning) // 4
        prompt = count_prompt_tokens(self.body, self.token_ratio)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion + reasoning,
            "total_tokens": prompt + completion + reasoning,
            "prompt_tokens_details": {"cached_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": reasoning},
            "cost": 0.0,
        }
        usage.update(self.step.get("usage") or {})
        return usage

    def message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.reasoning:
            message["reasoning"] = self.reasoning
        if self.details:
            message["reasoning_details"] = self.details
        if self.calls:
            message["tool_calls"] = [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": call["name"], "arguments": call["arguments"]},
                }
                for call in self.calls
            ]
        return message

    def _chunk(self, delta: Mapping[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": dict(delta), "finish_reason": finish}
        choice["native_finish_reason"] = finish
        return {**self.envelope("chat.completion.chunk"), "choices": [choice]}

    def _deltas(self) -> Iterator[dict[str, Any]]:
        size = int(self.step.get("piece_chars", 4))
        field = str(self.step.get("reasoning_field", "reasoning"))
        yield {"role": "assistant", "content": ""}
        for piece in _pieces(self.reasoning, size):
            yield {"content": None, field: piece}
        for item in self.details:
            yield {"content": None, "reasoning_details": [item]}
        for piece in _pieces(self.text, size):
            yield {"content": piece}
        for n, call in enumerate(self.calls):
            head = {"name": call["name"], "arguments": ""}
            yield {
                "tool_calls": [{"index": n, "id": call["id"], "type": "function", "function": head}]
            }
            for piece in _pieces(call["arguments"], size + 1):
                yield {"tool_calls": [{"index": n, "function": {"arguments": piece}}]}

    def events(self) -> list[str]:
        """The data payloads of the stream, ``[DONE]`` included when it is sent."""
        chunks: list[object] = [self._chunk(delta) for delta in self._deltas()]
        step = self.step
        if "error_chunk" in step:
            error = {**self._chunk({"content": ""}, "error"), "error": step["error_chunk"]}
            if step.get("usage"):
                error["usage"] = self.usage()
            chunks.append(error)
            return [json.dumps(chunk, ensure_ascii=False) for chunk in chunks]
        if "vllm_error" in step:
            chunks.append(
                {
                    "object": "error",
                    "message": step["vllm_error"],
                    "type": "BadRequestError",
                    "code": 400,
                }
            )
            return [json.dumps(chunk, ensure_ascii=False) for chunk in chunks]
        if self.finish_reason is not None:
            chunks.append(self._chunk({}, self.finish_reason))
        chunks.append(
            {**self.envelope("chat.completion.chunk"), "choices": [], "usage": self.usage()}
        )
        events = [json.dumps(chunk, ensure_ascii=False) for chunk in chunks]
        if step.get("done", True):
            events.append("[DONE]")
        return events


class FakeModel:
    """The server in a background thread on 127.0.0.1 and a free port; a context manager."""

    def __init__(
        self,
        script: Sequence[Mapping[str, Any]] = (),
        *,
        context_length: int = DEFAULT_CONTEXT_LENGTH,
        models: Sequence[str] = DEFAULT_MODELS,
        log_path: str | Path | None = None,
        enforce_context: bool = False,
        port: int = 0,
        token_ratio: float | None = None,
        overflow_style: str = "openrouter",
        auto_recap: bool = False,
    ) -> None:
        self._state = _State(
            script,
            context_length=context_length,
            models=models,
            log_path=Path(log_path) if log_path is not None else None,
            enforce_context=enforce_context,
            token_ratio=token_ratio,
            overflow_style=overflow_style,
            auto_recap=auto_recap,
        )
        self._server = _Server(("127.0.0.1", port), _Handler)
        self._server.state = self._state
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests received, in order."""
        return self._state.requests

    def wait_for_requests(self, count: int, timeout: float) -> int:
        """Wait until ``count`` chat requests have come (a seri under test is then in its
        ``count``-th model call), or ``timeout`` seconds; how many have come."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < deadline:
            time.sleep(0.01)
        return len(self.requests)

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """The headers (names lower-cased) of the chat requests received, in order."""
        return self._state.headers

    @property
    def refused(self) -> int:
        """Requests refused as over the window (``enforce_context``)."""
        with self._state.lock:
            return self._state.refused

    def prompt_tokens(self, body: Mapping[str, Any]) -> int:
        """A request's prompt tokens as this fake counts them."""
        return count_prompt_tokens(body, self._state.token_ratio)

    @property
    def remaining(self) -> int:
        """Steps not yet served."""
        with self._state.lock:
            return len(self._state.steps)

    def add_steps(self, *steps: Mapping[str, Any]) -> None:
        self._state.add(steps)

    def script(self, *steps: Mapping[str, Any]) -> None:
        """Replace the steps not yet served: one server for many short scripted runs."""
        self._state.replace(steps)

    def start(self) -> FakeModel:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="fake-model", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._state.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _load_script(path: Path) -> list[dict[str, Any]]:
    loaded = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(loaded, Mapping):
        loaded = loaded.get("steps", [])
    if not isinstance(loaded, list):
        raise ValueError(f"{path}: the script must be a JSON list of steps")
    return loaded


def _write_port(path: Path, port: int) -> None:
    # Written whole, then renamed, so a reader polling for the file never sees half a number.
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(f"{port}\n", encoding="utf-8")
    os.replace(temporary, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible model on loopback.")
    parser.add_argument("--script", type=Path, help="JSON list of steps (default: none)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", type=Path)
    parser.add_argument("--log-requests", type=Path)
    parser.add_argument("--context-length", type=int, default=DEFAULT_CONTEXT_LENGTH)
    parser.add_argument("--model", action="append", dest="models")
    parser.add_argument("--enforce-context", action="store_true")
    parser.add_argument("--token-ratio", type=float)
    parser.add_argument("--overflow-style", choices=OVERFLOW_STYLES, default="openrouter")
    parser.add_argument("--auto-recap", action="store_true")
    args = parser.parse_args(argv)
    steps = _load_script(args.script) if args.script else []
    fake = FakeModel(
        steps,
        context_length=args.context_length,
        models=tuple(args.models or DEFAULT_MODELS),
        log_path=args.log_requests,
        enforce_context=args.enforce_context,
        port=args.port,
        token_ratio=args.token_ratio,
        overflow_style=args.overflow_style,
        auto_recap=args.auto_recap,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    if args.port_file:
        _write_port(args.port_file, fake.port)
    print(fake.base_url, flush=True)
    try:
        fake.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._state.stopping.set()
        fake._server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
