"""The provider client over real HTTP against the loopback fake model (nothing mocked).

Only ``sleep`` is injected, so retry delays are recorded instead of waited out.
"""

from __future__ import annotations

import functools
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from scripts.fake_model import FakeModel
from seri.io.provider.provider import ProviderClient
from seri.pure.provider.provider_failure import FailureKind, ProviderFailure
from seri.pure.provider.stream_assembly import StreamResult
from seri.pure.provider.wire import build_request
from seri.pure.session.records import Message, ToolCall, assistant, tool_result, user
from tests.captures.table import load as load_captures
from tests.pairing import pairing_problems

KEY = "sk-or-v1-test0123456789abcdefSECRET"
SCHEMA_NAME = "openrouter-chat-request.schema.json"
SCHEMA_PLACES = (
    Path(__file__).resolve().parents[2] / "schemas" / SCHEMA_NAME,
    Path("/work/shared/reference") / SCHEMA_NAME,
)
TOOLS = ({"name": "read_file", "description": "Read", "parameters": {"type": "object"}},)


@functools.cache
def request_validator() -> Any:
    for place in SCHEMA_PLACES:
        if place.exists():
            schema = json.loads(place.read_text(encoding="utf-8"))
            return jsonschema.Draft202012Validator(schema)
    pytest.skip(f"{SCHEMA_NAME} not found")


def assert_valid(sent: dict[str, Any]) -> None:
    errors = [f"{list(e.path)}: {e.message}" for e in request_validator().iter_errors(sent)]
    assert not errors, errors[:5]


class Recorder:
    """Stands in for ``time.sleep`` and the ``on_retry`` hook: remembers, does not wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.retries: list[tuple[int, int | None, float, str]] = []

    def sleep(self, seconds: float) -> None:
        self.delays.append(seconds)

    def on_retry(self, attempt: int, status: int | None, delay: float, reason: str) -> None:
        self.retries.append((attempt, status, delay, reason))


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def client_for(fake: FakeModel | str, recorder: Recorder, **options: Any) -> ProviderClient:
    base = fake if isinstance(fake, str) else fake.base_url
    settings: dict[str, Any] = {
        "max_attempts": 5,
        "idle_timeout": 5.0,
        "sleep": recorder.sleep,
        "on_retry": recorder.on_retry,
        "jitter": lambda: 0.5,
        # The fake stands for a provider in the cloud (tests of local servers say otherwise).
        "server_is_local": False,
    }
    settings.update(options)
    return ProviderClient(base, KEY, **settings)


def answered(outcome: StreamResult | ProviderFailure) -> StreamResult:
    """The answer, which the test expects to have started."""
    assert isinstance(outcome, StreamResult), outcome
    return outcome


def refused(outcome: StreamResult | ProviderFailure, kind: FailureKind) -> ProviderFailure:
    """The failure of a request the test expects no answer to, of this kind."""
    assert isinstance(outcome, ProviderFailure), outcome
    assert outcome.kind == kind, outcome
    return outcome


def body(*messages: Message, stream: bool = True) -> dict[str, Any]:
    return build_request("fake/model", messages or (user("hi"),), TOOLS, stream=stream)


@pytest.fixture
def fake() -> Iterator[FakeModel]:
    with FakeModel() as server:
        yield server


def test_text_stream(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"text": "Hello, wörld ☃! " * 5, "usage": {"cost": 0.25}, "provider": "Prov"})
    seen: list[str] = []
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body(), seen.append))
    assert result.complete
    assert result.failure is None
    assert result.message.text == "Hello, wörld ☃! " * 5
    assert "".join(seen) == result.message.text
    assert len(seen) > 1
    assert result.finish_reason == "stop"
    assert result.usage is not None
    assert result.usage.cost == 0.25
    assert result.usage.provider == "Prov"
    assert result.usage.input_tokens > 0
    headers = fake.request_headers[0]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert recorder.delays == []


def test_tool_call_stream_with_reasoning(fake: FakeModel, recorder: Recorder) -> None:
    details = [{"type": "reasoning.text", "text": "plan", "signature": "s1", "index": 0}]
    fake.add_steps(
        {
            "reasoning": "I should read the file.",
            "reasoning_details": details,
            "text": "Reading.",
            "tool_calls": [
                {"id": "call_a", "name": "read_file", "arguments": {"path": "src/ä.py"}},
                {"id": "call_b", "name": "read_file", "arguments": {"path": "b.py"}},
            ],
            "split_bytes": 3,
            "line_ending": "\r\n",
        }
    )
    thoughts: list[str] = []
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body(), on_reasoning=thoughts.append))
    assert result.complete
    assert result.tool_calls_runnable
    assert result.finish_reason == "tool_calls"
    assert [c.id for c in result.message.tool_calls] == ["call_a", "call_b"]
    assert json.loads(result.message.tool_calls[0].arguments) == {"path": "src/ä.py"}
    assert result.message.reasoning == "I should read the file."
    assert "".join(thoughts) == "I should read the file."
    assert json.loads(result.message.reasoning_details) == details


def test_follow_up_request_is_valid_and_schema_checked(fake: FakeModel, recorder: Recorder) -> None:
    call = ToolCall(id="call_1", name="read_file", arguments='{"path": "a"}')
    fake.add_steps(
        {"tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "a"}}]}
    )
    fake.add_steps({"text": "done"})
    with client_for(fake, recorder) as client:
        first = answered(client.stream_chat(body(user("read a"))))
        history = (user("read a"), first.message, tool_result(call, "contents"))
        assert pairing_problems(history) == ()
        second = answered(client.stream_chat(body(*history)))
    assert second.message.text == "done"
    for sent in fake.requests:
        assert_valid(sent)
    assert fake.requests[1]["messages"][1]["content"] is None
    assert fake.requests[1]["messages"][2] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "contents",
    }


def test_429_retry_after_then_success(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps(
        {"status": 429, "headers": {"Retry-After": "3"}},
        {"status": 429, "headers": {"retry-after-ms": "1500"}},
        {"status": 503, "headers": {"Retry-After": "2"}},
        {"text": "finally"},
    )
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body()))
    assert result.message.text == "finally"
    assert recorder.delays == [3.0, 1.5, 2.0]
    assert [(a, s) for a, s, _, _ in recorder.retries] == [(1, 429), (2, 429), (3, 503)]
    assert len(fake.requests) == 4


def test_429_with_http_date(fake: FakeModel, recorder: Recorder) -> None:
    from email.utils import formatdate

    now = 1_800_000_000.0
    fake.add_steps(
        {"status": 429, "headers": {"Retry-After": formatdate(now + 20, usegmt=True)}},
        {"text": "ok"},
    )
    with client_for(fake, recorder, wall_clock=lambda: now) as client:
        answered(client.stream_chat(body()))
    assert recorder.delays == [20.0]


def test_429_without_hint_backs_off_with_jitter(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"status": 429, "repeat": 3}, {"text": "ok"})
    with client_for(fake, recorder, jitter=lambda: 0.999) as client:
        answered(client.stream_chat(body()))
    for delay, nominal in zip(recorder.delays, [0.5, 1.0, 2.0], strict=True):
        assert 0.75 * nominal <= delay <= nominal


def test_retry_after_beyond_cap_fails_at_once(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"status": 429, "headers": {"Retry-After": "3600"}}, {"text": "never"})
    with client_for(fake, recorder) as client:
        failure = refused(client.stream_chat(body()), "rate_limited")
    assert failure.message.startswith("rate limited, retry after ~1 h")
    assert len(fake.requests) == 1
    assert recorder.delays == []


def test_503_ten_times_sends_exactly_max_attempts(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"status": 503, "repeat": 10})
    with client_for(fake, recorder, max_attempts=4) as client:
        refused(client.stream_chat(body()), "server")
    assert len(fake.requests) == 4
    assert len(recorder.delays) == 3


def test_401_is_not_retried_and_never_shows_the_key(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps(
        {"status": 401, "body": {"error": {"code": 401, "message": f"Invalid key {KEY}"}}},
        {"text": "never"},
    )
    with client_for(fake, recorder) as client:
        assert KEY not in repr(client)
        failure = refused(client.stream_chat(body()), "auth")
    assert len(fake.requests) == 1
    for text in (failure.message, failure.detail, repr(failure)):
        assert KEY not in text
        assert "SECRET" not in text
    assert "invalid API key" in failure.message


@pytest.mark.parametrize(
    ("step", "kind", "words"),
    [
        ({"status": 400}, "bad_request", "invalid"),
        ({"status": 402}, "credits", "insufficient credits"),
        (
            {
                "status": 403,
                "body": {
                    "error": {
                        "code": 403,
                        "message": "flagged",
                        "metadata": {"reasons": ["harassment"], "flagged_input": "x"},
                    }
                },
            },
            "forbidden",
            "blocked by moderation",
        ),
        ({"status": 404}, "not_found", "model not found"),
    ],
)
def test_fatal_statuses(
    fake: FakeModel, recorder: Recorder, step: dict[str, Any], kind: FailureKind, words: str
) -> None:
    fake.add_steps(step, {"text": "never"})
    with client_for(fake, recorder) as client:
        failure = refused(client.stream_chat(body()), kind)
    assert words in failure.message
    assert len(fake.requests) == 1


def test_overflow_is_a_context_overflow_sent_once(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"overflow": True, "context_length": 8192}, {"text": "never"})
    with client_for(fake, recorder) as client:
        failure = refused(client.stream_chat(body()), "context_overflow")
    assert len(fake.requests) == 1
    assert failure.overflow is not None
    assert failure.overflow.limit == 8192


def test_cut_stream_is_interrupted_and_its_tool_call_not_runnable(
    fake: FakeModel, recorder: Recorder
) -> None:
    fake.add_steps(
        {
            "text": "Let me write it.",
            "tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "text": "x" * 40}}],
            "cut_after_chunks": 9,
        },
        {"text": "never"},
    )
    seen: list[str] = []
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body(), seen.append))
    assert not result.complete
    assert result.failure is not None
    assert result.failure.kind == "interrupted"
    assert result.message.text == "Let me write it."
    assert result.message.tool_calls
    assert not result.tool_calls_runnable
    assert len(fake.requests) == 1  # content had arrived: never sent twice


def test_cut_before_any_content_is_retried(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"cut_after_chunks": 0}, {"text": "second try"})
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body()))
    assert result.message.text == "second try"
    assert len(fake.requests) == 2
    assert recorder.retries[0][1] is None


def test_comments_are_life_until_the_deadline(fake: FakeModel, recorder: Recorder) -> None:
    """Keep-alive comments (OpenRouter's, llama.cpp's pings while it reads a prompt) say the
    server is working: the silence limit does not end such a stream, the deadline does."""
    fake.add_steps({"stall_seconds": 10, "stall_interval": 0.05, "text": "never"})
    started = time.monotonic()
    with client_for(fake, recorder, idle_timeout=0.4, total_timeout=1.2) as client:
        result = answered(client.stream_chat(body()))
    assert 1.2 <= time.monotonic() - started < 4
    assert result.failure is not None
    assert result.failure.kind == "stalled"
    assert result.failure.message == "provider did not finish the response within 1.2 s"
    assert len(fake.requests) == 1


def test_silence_after_the_headers_hits_the_idle_watchdog(
    fake: FakeModel, recorder: Recorder
) -> None:
    fake.add_steps({"silent_seconds": 3, "text": "late"})
    started = time.monotonic()
    with client_for(fake, recorder, idle_timeout=0.4) as client:
        result = client.stream_chat(body())
    assert time.monotonic() - started < 2.5
    assert isinstance(result, StreamResult) and result.failure is not None
    assert result.failure.message == "provider sent no content for 0.4 s"


def test_stall_after_some_content_keeps_the_partial(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps(
        {"text": "abcdefgh", "stall_seconds": 10, "stall_after_chunks": 2, "stall_interval": 0.05}
    )
    with client_for(fake, recorder, idle_timeout=0.4, total_timeout=1.0) as client:
        result = answered(client.stream_chat(body()))
    assert result.failure is not None
    assert result.failure.kind == "stalled"
    assert result.message.text == "abcd"


def test_byte_drip_hits_the_watchdog(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"text": "slow", "drip_interval": 0.1})
    started = time.monotonic()
    with client_for(fake, recorder, idle_timeout=0.5) as client:
        result = answered(client.stream_chat(body()))
    assert time.monotonic() - started < 3
    assert result.failure is not None
    assert result.failure.kind == "stalled"


def test_total_deadline(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"text": "x" * 400, "piece_chars": 1, "drip_interval": 0.002})
    with client_for(fake, recorder, idle_timeout=5, total_timeout=0.5) as client:
        result = answered(client.stream_chat(body()))
    assert result.failure is not None
    assert "did not finish the response within 0.5 s" in result.failure.message


def test_error_chunk_mid_stream(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps(
        {
            "text": "Partial answer",
            "error_chunk": {
                "code": "server_error",
                "message": "Provider disconnected unexpectedly",
            },
            "usage": {"prompt_tokens": 11, "completion_tokens": 3},
        }
    )
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body()))
    assert not result.complete
    assert result.message.text == "Partial answer"
    assert result.failure is not None
    assert "Provider disconnected unexpectedly" in result.failure.message
    assert result.usage is not None
    assert result.usage.input_tokens == 11
    assert result.failure.kind == "stream_error"


def test_vllm_error_chunk(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"text": "a", "vllm_error": "CUDA out of memory"})
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body()))
    assert result.failure is not None
    assert "CUDA out of memory" in result.failure.message


def test_length_finish_mid_arguments(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps(
        {
            "tool_calls": [{"name": "bash", "arguments": '{"command": "ls -'}],
            "finish_reason": "length",
        }
    )
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body()))
    assert result.complete
    assert not result.tool_calls_runnable
    assert result.message.tool_calls[0].arguments == '{"command": "ls -'


def test_missing_done_and_finish_is_incomplete(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"text": "hm", "finish_reason": None, "done": False})
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body()))
    assert not result.complete
    assert result.failure is not None
    assert result.failure.kind == "interrupted"


def test_non_streaming_request(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"text": "whole", "reasoning": "r"})
    with client_for(fake, recorder) as client:
        result = answered(client.stream_chat(body(stream=False)))
    assert result.complete
    assert result.message.text == "whole"
    assert result.message.reasoning == "r"


def test_script_exhausted(fake: FakeModel, recorder: Recorder) -> None:
    with client_for(fake, recorder) as client:
        assert answered(client.stream_chat(body())).message.text == "(script exhausted)"


def test_connection_refused_is_retried_then_fails(recorder: Recorder) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with client_for(f"http://127.0.0.1:{port}/v1", recorder, max_attempts=3) as client:
        refused(client.stream_chat(body()), "connection")
    assert len(recorder.delays) == 2


def test_context_window(recorder: Recorder) -> None:
    with (
        FakeModel(context_length=32768, models=("a/b", "fake/model")) as fake,
        client_for(fake, recorder) as client,
    ):
        assert client.context_window("fake/model") == 32768
        assert client.context_window("no/such") is None
    with client_for(fake.base_url, recorder) as client:  # server gone
        assert client.context_window("fake/model") is None


def test_fake_model_cli_port_file_and_request_log(tmp_path: Path, recorder: Recorder) -> None:
    import subprocess
    import sys

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "from the cli"}]))
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    command = [sys.executable, "scripts/fake_model.py", "--script", str(script)]
    command += ["--port-file", str(port_file), "--log-requests", str(log)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, cwd=Path(__file__).parents[3])
    try:
        deadline = time.monotonic() + 10
        while not port_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        port = int(port_file.read_text())
        with client_for(f"http://127.0.0.1:{port}/v1", recorder) as client:
            assert (
                answered(client.stream_chat(body(assistant("x"), user("y")))).message.text
                == "from the cli"
            )
    finally:
        process.terminate()
        process.wait(timeout=5)
    (logged,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged["messages"][-1] == {"role": "user", "content": "y"}


def test_fake_model_can_enforce_its_context_length(recorder: Recorder) -> None:
    with (
        FakeModel([{"text": "never"}], context_length=10, enforce_context=True) as fake,
        client_for(fake, recorder) as client,
    ):
        refused(client.stream_chat(body(user("x" * 400))), "context_overflow")


def test_fake_model_rejects_misspelt_steps() -> None:
    with pytest.raises(ValueError, match="tool_call"):
        FakeModel([{"tool_call": []}])


# --- a local server reading a long prompt -------------------------------------------------------

LLAMA_CPP_ANSWER = next(
    c["sse"] for c in load_captures() if c["id"] == "llamacpp-tool-call-cut-by-max-tokens"
)


def test_a_local_server_may_read_a_long_prompt_in_silence(
    fake: FakeModel, recorder: Recorder
) -> None:
    """A local server sends nothing while it reads a prompt (llama.cpp without progress): it
    is given the time a prompt of this size may take on a CPU, not the 0.4 s silence limit."""
    fake.add_steps({"silent_seconds": 1.5, "text": "read it"})
    long_prompt = body(user("x" * 3000))  # ~1,000 tokens: ~100 s at the planned CPU pace
    with client_for(fake, recorder, idle_timeout=0.4, server_is_local=True) as client:
        result = answered(client.stream_chat(long_prompt))
    assert result.complete and result.message.text == "read it"
    assert len(fake.requests) == 1


def test_llama_cpp_is_asked_for_progress_which_keeps_the_stream_alive(
    fake: FakeModel, recorder: Recorder
) -> None:
    """After an answer that shows llama.cpp's ``timings`` (a real capture), the next request
    asks for ``return_progress``; the progress chunks that follow (llama.cpp's shape) are
    signs of life, never text, and the answer after them arrives whole."""
    progress = [
        {"total": 2641, "cache": 0, "processed": done, "time_ms": done * 75}
        for done in (0, 512, 1024, 1536, 2048, 2641)
    ]
    fake.add_steps(
        {"raw_sse": LLAMA_CPP_ANSWER},
        {"prompt_progress": progress, "progress_interval": 0.25, "text": "after reading"},
    )
    with client_for(fake, recorder, idle_timeout=0.4, server_is_local=True) as client:
        client.stream_chat(body())
        result = answered(client.stream_chat(body()))
    assert "return_progress" not in fake.requests[0]
    assert fake.requests[1]["return_progress"] is True
    assert result.complete and result.message.text == "after reading"


def test_a_remote_server_is_never_asked_for_progress(fake: FakeModel, recorder: Recorder) -> None:
    fake.add_steps({"raw_sse": LLAMA_CPP_ANSWER}, {"text": "plain"})
    with client_for(fake, recorder) as client:
        client.stream_chat(body())
        client.stream_chat(body())
    assert all("return_progress" not in request for request in fake.requests)
