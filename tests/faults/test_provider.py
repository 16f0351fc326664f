"""Provider faults, P1–P7 of reliability-anchors §5, against the loopback fake OpenRouter.

The real ``seri chat -p`` talks HTTP to ``scripts/fake_model.py`` (and, for a connection reset
before any header, to a raw socket server below). Waits use the fake's small hints
(``Retry-After: 1``) and are measured; only the watchdog times, 90 s and 600 s in seri, are
scaled down through ``seri_child.py`` so that a stalled stream is caught in a second.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.faults.ledger import FaultLedger
from tests.faults.support import (
    KEY,
    assert_request_ok,
    call,
    chat_env,
    check_store,
    child_command,
    events,
    export,
    one_line_error,
    run,
    seri,
    start,
    write_config,
)


def _chat(
    project: Path,
    home: Path,
    fake: FakeModel | str,
    *args: str,
    prompt: str = "go",
    command: list[str] | None = None,
) -> tuple[Any, float]:
    started = time.monotonic()
    result = run(
        (command or seri()) + ["chat", *args, "-p", prompt],
        home=home,
        cwd=project,
        env=chat_env(fake),
    )
    return result, time.monotonic() - started


def _retries(home: Path, project: Path) -> list[dict[str, Any]]:
    return [dict(e) for e in events(export(home, project), "retry")]


# --- P1 --------------------------------------------------------------------------------------


def _http_date(seconds_ahead: float) -> str:
    return formatdate(time.time() + seconds_ahead, usegmt=True)


@pytest.mark.parametrize(
    ("case", "status", "headers", "low", "high"),
    [
        ("429 Retry-After: 1", 429, {"Retry-After": "1"}, 1.0, 1.0),
        ("503 Retry-After: 1", 503, {"Retry-After": "1"}, 1.0, 1.0),
        ("429 retry-after-ms: 1500", 429, {"retry-after-ms": "1500"}, 1.5, 1.5),
        ("429 HTTP-date", 429, None, 0.01, 3.0),
    ],
)
def test_P1_429_503_and_retry_after(
    project: Path,
    seri_home: Path,
    fault_ledger: FaultLedger,
    case: str,
    status: int,
    headers: dict[str, str] | None,
    low: float,
    high: float,
) -> None:
    """A hint within the cap is waited out (measured), then the next attempt succeeds; the
    retry is in the trajectory with its attempt number, status and delay."""
    fault_ledger.injected("P1")
    hint = headers if headers is not None else {"Retry-After": _http_date(2.5)}
    with FakeModel([{"status": status, "headers": hint}, {"text": "after the wait"}]) as fake:
        result, elapsed = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "after the wait\n"
    assert sent == 2
    retries = _retries(seri_home, project)
    assert [(r["attempt"], r["status"]) for r in retries] == [(1, status)]
    delay = retries[0]["delay"]
    assert low <= delay <= high, retries
    assert elapsed >= delay, f"waited {elapsed:.2f} s for a {delay} s hint"
    assert f"retrying in {delay:.1f} s (attempt 2)" in result.stderr
    fault_ledger.survived("P1")


def test_P1_a_hint_beyond_the_cap_fails_at_once(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    fault_ledger.injected("P1")
    with FakeModel([{"status": 429, "headers": {"Retry-After": "3600"}}]) as fake:
        result, elapsed = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 1
    assert "rate limited, retry after ~1 h" in result.stderr
    one_line_error(result.stderr)
    assert sent == 1 and elapsed < 5
    fault_ledger.survived("P1")


def test_P1_without_a_hint_the_backoff_grows_with_jitter_up_to_max_attempts(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """No hint: 0.5 s, 1 s, 2 s nominal, each within [0.75·d, d]. A provider that keeps
    refusing gets exactly the maximum number of attempts (5), each recorded."""
    fault_ledger.injected("P1", 3)
    script = [{"status": 429, "repeat": 3}, {"text": "at last"}]
    with FakeModel(script) as fake:
        result, elapsed = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 0, result.stderr
    assert sent == 4
    retries = _retries(seri_home, project)
    assert [r["attempt"] for r in retries] == [1, 2, 3]
    for retry, nominal in zip(retries, (0.5, 1.0, 2.0), strict=True):
        assert 0.75 * nominal <= retry["delay"] <= nominal, retries
        assert retry["status"] == 429
    assert elapsed >= sum(r["delay"] for r in retries)
    fault_ledger.survived("P1", 3)

    fault_ledger.injected("P1", 10)
    refusing = [{"status": 429, "headers": {"retry-after-ms": "1"}, "repeat": 10}]
    with FakeModel(refusing) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue")
        sent = len(fake.requests)
    assert result.returncode == 1
    assert sent == 5, "the attempt count exceeded the maximum"
    assert "gave up after 5 attempts" in result.stderr
    one_line_error(result.stderr)
    assert [r["attempt"] for r in _retries(seri_home, project)][3:] == [1, 2, 3, 4]
    fault_ledger.survived("P1", 10)


# --- P2 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [408, 500, 502, 503])
def test_P2_server_failures_are_retried(
    project: Path, seri_home: Path, fault_ledger: FaultLedger, status: int
) -> None:
    fault_ledger.injected("P2")
    with FakeModel([{"status": status}, {"text": "second attempt"}]) as fake:
        result, _ = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "second attempt\n"
    assert sent == 2
    assert [r["status"] for r in _retries(seri_home, project)] == [status]
    fault_ledger.survived("P2")


def _capture(capture_id: str) -> dict[str, Any]:
    captures = Path(__file__).resolve().parents[1] / "captures" / "captures.json"
    found = json.loads(captures.read_text(encoding="utf-8"))["captures"]
    return next(c for c in found if c["id"] == capture_id)


def test_P2_the_same_internal_error_twice_is_not_retried_again(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """llama.cpp answers 500 to every request it cannot parse (a real capture: a cut tool call
    sent back). Five attempts, backing off, only waited for the same answer: seri stops after
    the second identical one and says so. A 500 whose body changes is retried as before."""
    fault_ledger.injected("P2", 2)
    refusal = _capture("llamacpp-cut-call-sent-back")
    same = {"status": 500, "body": json.loads(refusal["body"]), "repeat": 10}
    with FakeModel([same]) as fake:
        result, _ = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 1
    assert sent == 2
    # One notice for the retry, then the error that ends the task.
    assert result.stderr.count("retrying in") == 1
    last = result.stderr.strip().splitlines()[-1]
    assert "the same answer to 2 attempts in a row" in last and "not retried again" in last
    fault_ledger.survived("P2", 2)
    fault_ledger.injected("P2", 2)
    changing = [
        {"status": 500, "body": {"error": {"code": 500, "message": f"worker {n} crashed"}}}
        for n in range(2)
    ]
    with FakeModel([*changing, {"text": "third time"}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue")
        sent = len(fake.requests)
    assert result.returncode == 0, result.stderr
    assert sent == 3
    fault_ledger.survived("P2", 2)


REFUSALS = [
    (400, None, "the provider rejected the request as invalid"),
    (401, None, "invalid API key"),
    (402, None, "insufficient credits"),
    (
        403,
        {
            "error": {
                "code": 403,
                "message": "Your input was flagged",
                "metadata": {"reasons": ["violence"], "flagged_input": "..."},
            }
        },
        "blocked by moderation",
    ),
    (404, None, "model not found"),
]


def test_P2_refusals_are_not_retried_and_each_says_why(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """400, 401, 402, 403, 404: one request each, a message of its own, never the key."""
    for status, body, words in REFUSALS:
        fault_ledger.injected("P2")
        step: dict[str, Any] = {"status": status}
        if body is not None:
            step["body"] = body
        if status == 401:
            step["body"] = {"error": {"code": 401, "message": f"Incorrect API key: {KEY}"}}
        with FakeModel([step, {"text": "must not be reached"}]) as fake:
            result, _ = _chat(project, seri_home, fake)
            sent = len(fake.requests)
        assert result.returncode == 1, (status, result.stderr)
        assert sent == 1, f"{status} was retried"
        assert words in result.stderr, (status, result.stderr)
        assert KEY not in result.stderr + result.stdout
        one_line_error(result.stderr)
        fault_ledger.survived("P2")


def test_P2_a_provider_that_keeps_failing_gets_exactly_max_attempts(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    fault_ledger.injected("P2")
    with FakeModel([{"status": 503, "headers": {"retry-after-ms": "1"}, "repeat": 10}]) as fake:
        result, _ = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 1
    assert sent == 5, "seri's loop is the only retry loop: 5 attempts, 5 requests"
    fault_ledger.survived("P2")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_P2_connection_refused_is_retried(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Nothing listens at first: seri says it will retry; the provider comes up; it works."""
    fault_ledger.injected("P2")
    write_config(seri_home, {"context_window": 200_000})
    port = _free_port()
    proc = start(
        seri("chat", "-p", "go"),
        home=seri_home,
        cwd=project,
        env=chat_env(f"http://127.0.0.1:{port}/v1"),
    )
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "could not reach the provider" in line and "retrying in" in line, line
    with FakeModel([{"text": "came up"}], port=port) as fake:
        stdout, stderr = proc.communicate(timeout=30)
        sent = len(fake.requests)
    assert proc.returncode == 0, stderr
    assert stdout == "came up\n" and sent == 1
    fault_ledger.survived("P2")


class _ResettingServer:
    """Accepts HTTP requests; resets the first ``resets`` connections before any header,
    then answers a streamed text."""

    ANSWER = "after the reset"

    def __init__(self, resets: int) -> None:
        self.resets = resets
        self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(h.split(b":")[1])
                        for h in head.split(b"\r\n")
                        if h.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests += 1
                if self.requests <= self.resets:
                    conn.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    continue  # closing with linger 0 sends RST: no status line, no header
                conn.sendall(self._answer())

    def _answer(self) -> bytes:
        def chunk(delta: dict[str, Any], finish: str | None) -> str:
            payload = {
                "id": "gen-reset",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "fake/model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(payload)}\n\n"

        body = (
            chunk({"role": "assistant", "content": self.ANSWER}, None)
            + chunk({}, "stop")
            + "data: [DONE]\n\n"
        ).encode()
        return (
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def resetting() -> Iterator[_ResettingServer]:
    server = _ResettingServer(resets=2)
    yield server
    server.close()


def test_P2_a_reset_before_the_headers_is_retried(
    project: Path, seri_home: Path, fault_ledger: FaultLedger, resetting: _ResettingServer
) -> None:
    fault_ledger.injected("P2", 2)
    write_config(seri_home, {"context_window": 200_000})
    result, _ = _chat(project, seri_home, resetting.base_url)
    assert result.returncode == 0, result.stderr
    assert result.stdout == resetting.ANSWER + "\n"
    assert resetting.requests == 3
    retries = _retries(seri_home, project)
    assert [(r["attempt"], r["status"]) for r in retries] == [(1, None), (2, None)]
    fault_ledger.survived("P2", 2)


# --- P3 --------------------------------------------------------------------------------------

CUT_CONTENT = "x" * 200


def _only_flagged_partials(messages: Any) -> bool:
    """Nothing but the prompt, and what arrived of the answer flagged partial, no tool calls."""
    return messages[0].role == "user" and all(
        m.role == "assistant" and m.kind == "partial" and not m.tool_calls for m in messages[1:]
    )


def _cut_step() -> dict[str, Any]:
    """Text, a tool call's head and part of its arguments, then the socket closes: no finish
    reason, no [DONE]. (1 role chunk + 4 text pieces + 1 call head + 10 argument pieces.)"""
    return {
        "text": "partial answer",
        "tool_calls": [call("cut1", "write_file", path="cut.txt", content=CUT_CONTENT)],
        "cut_after_chunks": 16,
    }


def test_P3_stream_cut_mid_response(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """The cut turn is not stored as complete, its half tool call never runs, `-p` exits 1,
    nothing is sent twice, and the next request is valid. A cut before any content is
    retried (nothing of the answer can be repeated)."""
    fault_ledger.injected("P3")
    with FakeModel([_cut_step(), {"text": "never"}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--allow", "write_file")
        sent = len(fake.requests)
    assert result.returncode == 1
    assert "cut off" in result.stderr, result.stderr
    one_line_error(result.stderr)
    assert sent == 1, "a stream that had started was sent again"
    assert not (project / "cut.txt").exists(), "the half-received tool call ran"
    _session, messages = next(iter(check_store(seri_home).items()))
    assert _only_flagged_partials(messages), "the cut answer was stored as complete"
    ends = events(export(seri_home, project), "turn_end")
    assert ends[-1]["status"] == "error", "a cut stream is a failed turn, not an interruption"
    with FakeModel([{"text": "next"}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue")
        requests = list(fake.requests)
    assert result.returncode == 0, result.stderr
    assert_request_ok(requests[0])
    fault_ledger.survived("P3")

    fault_ledger.injected("P3")
    with FakeModel([{"cut_after_chunks": 0}, {"text": "second try"}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue")
        sent = len(fake.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "second try\n" and sent == 2
    fault_ledger.survived("P3")


def test_P3_the_partial_text_is_kept_and_flagged(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    fault_ledger.injected("P3")
    with FakeModel([_cut_step()]) as fake:
        result, _ = _chat(project, seri_home, fake, "--allow", "write_file")
    assert result.returncode == 1
    messages = next(iter(check_store(seri_home).values()))
    kept = [m for m in messages if "partial answer" in m.text]
    assert kept, "the text that arrived before the cut was not kept"
    assert kept[0].kind, "the partial answer must be marked incomplete"
    fault_ledger.survived("P3")


# --- P4 --------------------------------------------------------------------------------------

ERROR_CHUNK = {"code": "server_error", "message": "Provider disconnected unexpectedly"}


@pytest.mark.parametrize(
    ("shape", "step", "words"),
    [
        (
            "openrouter",
            {
                "text": "some partial words",
                "error_chunk": ERROR_CHUNK,
                "usage": {"prompt_tokens": 11, "completion_tokens": 7},
            },
            "Provider disconnected unexpectedly",
        ),
        (
            "vllm",
            {"text": "some partial words", "vllm_error": "worker died: CUDA error"},
            "worker died: CUDA error",
        ),
    ],
)
def test_P4_error_event_inside_a_200_stream(
    project: Path,
    seri_home: Path,
    fault_ledger: FaultLedger,
    shape: str,
    step: dict[str, Any],
    words: str,
) -> None:
    """The provider's own message reaches the person; no decoder crash; the turn is not
    stored as done and not sent again; the next request is valid."""
    fault_ledger.injected("P4")
    with FakeModel([step, {"text": "never"}]) as fake:
        result, _ = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 1
    assert words in result.stderr, result.stderr
    one_line_error(result.stderr)
    assert sent == 1
    messages = next(iter(check_store(seri_home).values()))
    assert _only_flagged_partials(messages)
    ends = events(export(seri_home, project), "turn_end")
    assert ends[-1]["status"] in ("error", "interrupted") and words in ends[-1]["error"]
    with FakeModel([{"text": "next"}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue")
        requests = list(fake.requests)
    assert result.returncode == 0, result.stderr
    assert_request_ok(requests[0])
    fault_ledger.survived("P4")


def test_P4_partial_text_and_usage_of_an_errored_stream_are_kept(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    fault_ledger.injected("P4")
    step = {
        "text": "some partial words",
        "error_chunk": ERROR_CHUNK,
        "usage": {"prompt_tokens": 11, "completion_tokens": 7},
    }
    with FakeModel([step]) as fake:
        result, _ = _chat(project, seri_home, fake)
    assert result.returncode == 1
    lines = export(seri_home, project)
    usages = [e["usage"] for e in lines if isinstance(e.get("usage"), dict)]
    assert any(u.get("input_tokens") == 11 for u in usages), "the chunk's usage is not recorded"
    messages = next(iter(check_store(seri_home).values()))
    assert any("some partial words" in m.text for m in messages), "the partial text is lost"
    fault_ledger.survived("P4")


# --- P5 --------------------------------------------------------------------------------------


def test_P5_keep_alive_comments_are_skipped(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """(a) `: OPENROUTER PROCESSING` between every chunk (and a chunk boundary every 3
    bytes) is skipped, never parsed as JSON and never shown or stored."""
    fault_ledger.injected("P5")
    with FakeModel([{"text": "clean answer", "split_bytes": 3}]) as fake:
        result, _ = _chat(project, seri_home, fake)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "clean answer\n"
    messages = next(iter(check_store(seri_home).values()))
    assert [m.text for m in messages] == ["go", "clean answer"]
    fault_ledger.survived("P5")


@pytest.mark.parametrize(
    ("case", "step", "words"),
    [
        (
            # Comments are signs of life (llama.cpp pings while it reads a prompt): only the
            # deadline ends a stream of nothing else.
            "comments only",
            {"stall_seconds": 600, "stall_interval": 0.1},
            "provider did not finish the response within 3 s",
        ),
        (
            "one byte every 0.8 s",
            {"text": "slow", "drip_interval": 0.8},
            "provider sent no content for 1 s",
        ),
        (
            "content past the deadline",
            {"text": "z" * 4000, "drip_interval": 0.001},
            "provider did not finish the response within 3 s",
        ),
    ],
)
def test_P5_stalls_hit_the_watchdog_and_the_deadline(
    project: Path,
    seri_home: Path,
    fault_ledger: FaultLedger,
    case: str,
    step: dict[str, Any],
    words: str,
) -> None:
    """(b) comments only, (c) one byte every 0.8 s, and a stream that never ends: httpx's
    read timeout never trips (bytes keep coming), seri's content watchdog (1 s here) or its
    whole-response deadline (3 s here) does. Treated like a cut stream: exit 1, not stored
    as done, not sent again."""
    fault_ledger.injected("P5")
    with FakeModel([step, {"text": "never"}]) as fake:
        result, elapsed = _chat(
            project, seri_home, fake, command=child_command("--idle", "1", "--total", "3")
        )
        sent = len(fake.requests)
    assert result.returncode == 1
    assert words in result.stderr, result.stderr
    one_line_error(result.stderr)
    assert elapsed < 12, f"{case}: took {elapsed:.1f} s"
    assert sent == 1
    messages = next(iter(check_store(seri_home).values()))
    assert _only_flagged_partials(messages)
    fault_ledger.survived("P5")


# --- P6 --------------------------------------------------------------------------------------

OVERFLOWS: list[tuple[str, int, Any]] = [
    (
        "openai",
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. "
                "However, your messages resulted in 8227 tokens. "
                "Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    (
        "responses api",
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. "
                "Please adjust your input and try again.",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        },
    ),
    (
        "openrouter numeric code",
        400,
        {
            "error": {
                "code": 400,
                # The input alone is over the window (when only the output is, max_tokens
                # is lowered).
                "message": "This endpoint's maximum context length is 131072 tokens. However, you "
                "requested about 138956 tokens (136956 of text input, 2000 in the output). "
                'Please reduce the length of either one, or use the "middle-out" '
                "transform to compress your prompt automatically.",
            }
        },
    ),
    (
        "502 wrapper with metadata.raw",
        502,
        {
            "error": {
                "message": "Provider returned error",
                "code": 502,
                "metadata": {
                    "provider_name": "DeepInfra",
                    "raw": json.dumps(
                        {
                            "error": {
                                "message": "This model's maximum context length is "
                                "16000 tokens. However, you requested 17165 tokens (16165 in "
                                "the messages, 1000 in the completion)."
                            }
                        }
                    ),
                },
            }
        },
    ),
    (
        "anthropic",
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 250000 tokens > 200000 maximum",
            },
        },
    ),
    ("413", 413, "Payload too large"),
]
LOOKALIKES: list[tuple[str, int, Any]] = [
    (
        "400 echoing 429",
        400,
        {
            "error": {
                "code": 400,
                "message": "Invalid schema for function 'f': code 429 is not allowed",
            }
        },
    ),
    (
        "string_above_max_length",
        400,
        {
            "error": {
                "message": "Invalid 'messages[1].content': string too long.",
                "type": "invalid_request_error",
                "code": "string_above_max_length",
            }
        },
    ),
]


@pytest.mark.parametrize(
    ("form", "status", "body"),
    OVERFLOWS + LOOKALIKES,
    ids=[f for f, _, _ in OVERFLOWS + LOOKALIKES],
)
def test_P6_context_too_long_is_recognised_and_never_loops(
    project: Path,
    seri_home: Path,
    fault_ledger: FaultLedger,
    form: str,
    status: int,
    body: Any,
) -> None:
    """Every overflow form is recognised as one (a 502 included) and is never resent
    unchanged; lookalikes are plain refusals, not retried as rate limits."""
    fault_ledger.injected("P6")
    overflow = form in {f for f, _, _ in OVERFLOWS}
    with FakeModel([{"status": status, "body": body}, {"text": "never"}]) as fake:
        result, _ = _chat(project, seri_home, fake)
        sent = len(fake.requests)
    assert result.returncode == 1
    one_line_error(result.stderr)
    assert sent == 1, f"{form}: sent again unchanged"
    recorded = export(seri_home, project)
    if overflow:
        assert "the request is too long" in result.stderr, result.stderr
        assert len(events(recorded, "overflow")) == 1
        assert events(recorded, "turn_end")[-1]["status"] == "overflow"
    else:
        assert "the request is too long" not in result.stderr, result.stderr
        assert "rate limited" not in result.stderr
        assert events(recorded, "overflow") == []
        assert events(recorded, "retry") == []
    fault_ledger.survived("P6")


def _long_session(project: Path, home: Path) -> None:
    write_config(home, {"compaction": {"keep_tokens": 60}})
    script: list[dict[str, Any]] = [
        {"tool_calls": [call(f"g{k}", "glob", pattern="*")], "text": f"round {k}"}
        for k in range(10)
    ]
    script.append({"text": "listed"})
    with FakeModel(script) as fake:
        result, _ = _chat(project, home, fake, prompt="list, many times")
    assert result.returncode == 0, result.stderr


RECAP = '{"goal": "g", "progress": ["p"], "blockers": [], "next_steps": ["n"]}'


@pytest.mark.parametrize(
    ("case", "script", "code", "calls", "words"),
    [
        ("recovers", [{"overflow": True}, {"text": RECAP}, {"text": "fits now"}], 0, 3, ""),
        (
            "still too long",
            [{"overflow": True}, {"text": RECAP}, {"overflow": True}],
            1,
            3,
            "still too long after compacting",
        ),
        # A refused summarizer request is shrunk and tried once more before compaction gives up.
        (
            "the summary overflows twice",
            [{"overflow": True}, {"overflow": True}, {"overflow": True}],
            1,
            3,
            "compaction failed",
        ),
    ],
)
def test_P6_compacts_at_most_once_per_turn(
    project: Path,
    seri_home: Path,
    fault_ledger: FaultLedger,
    case: str,
    script: list[dict[str, Any]],
    code: int,
    calls: int,
    words: str,
) -> None:
    """An overflow compacts once and retries once; a second overflow, or a summarizer that
    overflows too, ends the turn with a clear message, within the stated number of calls."""
    _long_session(project, seri_home)
    fault_ledger.injected("P6")
    with FakeModel([*script, {"text": "never"}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue", prompt="one more")
        requests = list(fake.requests)
    assert result.returncode == code, result.stderr
    assert len(requests) == calls
    assert words in result.stderr
    one_line_error(result.stderr)
    compactions = list(events(export(seri_home, project), "compaction"))
    assert len(compactions) == (0 if case == "the summary overflows twice" else 1)
    assert all(c["trigger"] == "overflow" for c in compactions)
    if code == 0:
        assert_request_ok(requests[-1])
        assert requests[-1]["messages"] != requests[0]["messages"]
    fault_ledger.survived("P6")


OUTPUT_OVERFLOW = {
    "error": {
        "code": 400,
        "message": (
            "This endpoint's maximum context length is 200000 tokens. However, you requested about "
            "250500 tokens (500 of text input, 250000 in the output). Please reduce the length of "
            'either one, or use the "middle-out" transform to compress your prompt automatically.'
        ),
    }
}


def test_P6_an_output_budget_beyond_the_window_lowers_max_tokens(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """max_tokens >= the window: the input fits, so seri lowers max_tokens and asks again
    rather than compacting (which could not help)."""
    write_config(seri_home, {"sampling": {"max_tokens": 250_000}})
    fault_ledger.injected("P6")
    with FakeModel([{"status": 400, "body": OUTPUT_OVERFLOW}, {"text": "fits"}]) as fake:
        result, _ = _chat(project, seri_home, fake)
        requests = list(fake.requests)
    assert result.returncode == 0, result.stderr
    assert len(requests) == 2
    assert requests[0]["max_tokens"] == 250_000
    assert requests[1]["max_tokens"] < 200_000 - 500
    assert events(export(seri_home, project), "compaction") == []
    fault_ledger.survived("P6")


# --- P7 --------------------------------------------------------------------------------------


def test_P7_malformed_tool_calls_in_a_stream(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """Arguments that are not JSON, `{}` without the required parameters, an unknown tool, a
    duplicate call id. (`finish_reason: "length"` inside the arguments ends the task: below.)

    Nothing runs; every call gets exactly one result saying why; the trajectory keeps the raw
    arguments as sent; the session goes on with valid requests (a repeated id is renamed, so
    that each result still answers exactly one call).
    """
    bad_json = '{"path": "json.txt", "content": not json'
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"id": "bad_json", "name": "write_file", "arguments": bad_json},
                call("missing", "write_file"),
                call("unknown", "launch_missiles", target="moon"),
            ]
        },
        {
            "tool_calls": [
                call("dup", "write_file", path="dup1.txt", content="one"),
                call("dup", "write_file", path="dup2.txt", content="two"),
            ]
        },
        {"text": "recovered"},
    ]
    fault_ledger.injected("P7", 4)
    with FakeModel(script) as fake:
        result, _ = _chat(project, seri_home, fake, "--allow", "write_file")
        requests = list(fake.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "recovered\n"
    assert sorted(p.name for p in project.iterdir()) == [], "a malformed call ran"
    for body in requests:
        assert_request_ok(body)
    answers = {
        m["tool_call_id"]: m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"
    }
    expected = {
        "bad_json": "not valid JSON",
        "missing": "missing required parameter(s): path, content",
        "unknown": "unknown tool 'launch_missiles'",
        "dup": "more than one tool call the id 'dup'",
        "dup~2": "more than one tool call the id 'dup'",
    }
    assert set(answers) == set(expected)
    for call_id, words in expected.items():
        assert answers[call_id].startswith("not run:") and words in answers[call_id], (
            call_id,
            answers[call_id],
        )
    recorded = events(export(seri_home, project), "tool_call")
    raw = {e["arguments"] for e in recorded}
    assert bad_json in raw, "the raw arguments are not recorded"
    fault_ledger.survived("P7", 4)


def test_P7_a_tool_call_cut_by_the_output_limit_is_never_stored(
    project: Path, seri_home: Path, fault_ledger: FaultLedger
) -> None:
    """`finish_reason: "length"` inside a call's arguments: the task is not done (exit 1, the
    trajectory says `length`), the call neither runs nor is stored with its broken arguments
    (llama.cpp answers 500 to every later request that carries them), and the next task of the
    session sends only valid requests."""
    cut_arguments = '{"path": "length.txt", "content": "abc'
    script: list[dict[str, Any]] = [
        {
            "text": "Writing it",
            "tool_calls": [{"id": "cut", "name": "write_file", "arguments": cut_arguments}],
            "finish_reason": "length",
        },
        {"text": "recovered"},
    ]
    fault_ledger.injected("P7")
    with FakeModel(script) as fake:
        first, _ = _chat(project, seri_home, fake, "--allow", "write_file")
        second, _ = _chat(project, seri_home, fake, "--continue")
        requests = list(fake.requests)
    assert first.returncode == 1
    assert "finish_reason length" in first.stderr
    assert second.returncode == 0, second.stderr
    assert list(project.iterdir()) == [], "a cut call ran"
    for body in requests:
        assert_request_ok(body)
    assert cut_arguments not in json.dumps(requests[-1]), "the cut call was sent back"
    stored = repr(next(iter(check_store(seri_home).values())))
    assert cut_arguments not in stored and "Writing it" in stored
    recorded = export(seri_home, project)
    assert events(recorded, "model_call")[0]["finish_reason"] == "length"
    assert events(recorded, "turn_end")[0]["status"] == "length"
    fault_ledger.survived("P7")


# A bodiless 400 is how Cerebras answers an over-long request (earendil-works/pi@17c253c:
# packages/ai/src/utils/overflow.ts, "Cerebras: 400/413 status code (no body)").
@pytest.mark.parametrize(
    ("case", "window", "status", "overflow"),
    [
        # A first task of ~3,000 tokens, then the 8,000-token window: over half of it.
        ("a big request's bodiless 400", 8_000, 400, True),
        ("a small request's bodiless 400", 200_000, 400, False),
        ("a small request's bodiless 413", 200_000, 413, True),
    ],
)
def test_P6_a_bodiless_refusal_is_an_overflow_only_when_the_request_is_big(
    project: Path,
    seri_home: Path,
    fault_ledger: FaultLedger,
    case: str,
    window: int,
    status: int,
    overflow: bool,
) -> None:
    """A 400 with no body on a request of at least half the window is taken for an overflow
    (once); on a small request it is a plain error, never retried; a bodiless 413 says "too
    large" by itself."""
    fault_ledger.injected("P6")
    write_config(seri_home, {"context_window": 200_000})
    with FakeModel([{"text": "read"}]) as fake:
        first, _ = _chat(project, seri_home, fake, prompt="lorem ipsum dolor " * 700)
    assert first.returncode == 0, first.stderr
    write_config(seri_home, {"context_window": window})
    with FakeModel([{"status": status, "body": ""}, {"status": status, "body": ""}]) as fake:
        result, _ = _chat(project, seri_home, fake, "--continue", prompt="next")
        sent = len(fake.requests)
    assert result.returncode == 1, result.stderr
    one_line_error(result.stderr)
    assert sent == 1, f"{case}: sent again unchanged"
    recorded = export(seri_home, project)
    ends = events(recorded, "turn_end")
    if overflow:
        assert len(events(recorded, "overflow")) == 1, case
        assert ends[-1]["status"] == "overflow"
    else:
        assert events(recorded, "overflow") == []
        assert ends[-1]["status"] == "error"
        assert "rejected the request as invalid (HTTP 400)" in result.stderr, result.stderr
    fault_ledger.survived("P6")
