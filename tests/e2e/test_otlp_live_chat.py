"""Live OTLP export from `seri chat` (issue 18): real `seri chat -p` subprocesses against the
loopback model, with OTEL_EXPORTER_OTLP_ENDPOINT naming a loopback receiver that decodes
with opentelemetry-proto, a collector that hangs, or a port nothing listens on.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, RunSeri, seri_env
from tests.e2e.test_chat import KEY, call, chat_env
from tests.e2e.test_otlp_export import (
    CONTENT,
    HEADER_SECRET,
    calls_by_session,
    check_concurrent_traces,
    check_parenting,
    export_otlp,
    run_concurrently,
    task_script,
)
from tests.otlp_receiver import BlackHole, OtlpReceiver, attributes_of, refused_endpoint


def _chat(
    run_seri: RunSeri,
    endpoint: str,
    *args: str,
    script: list[dict[str, Any]] | None = None,
    **env: str,
) -> Any:
    with FakeModel(script or task_script()) as fake:
        return run_seri(
            "chat",
            "--allow",
            "task",
            "--allow",
            "write_file",
            *args,
            "-p",
            "do it",
            env=chat_env(
                fake,
                OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
                OTEL_EXPORTER_OTLP_HEADERS=f"x-api-key={HEADER_SECRET}",
                **env,
            ),
        )


def _sorted(spans: list[Any]) -> list[Any]:
    return sorted(spans, key=lambda span: span.span_id)


def test_a_chat_run_lands_live_as_the_stored_export_would_send_it(
    run_seri: RunSeri, seri_home: Path
) -> None:
    with OtlpReceiver() as receiver:
        result = _chat(run_seri, receiver.endpoint, "--tag", "shard=7")
    assert result.returncode == 0, result.stderr
    assert "telemetry" not in result.stderr
    assert not receiver.received.errors
    live = _sorted(receiver.received.spans())
    session = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"]
    check_parenting(live)
    assert Counter(span.name for span in live) == {
        "invoke_agent seri": 2,
        "chat fake/model": 5,
        "execute_tool task": 1,
        "execute_tool glob": 1,
        "execute_tool write_file": 1,
        "execute_tool bash": 1,
    }
    root = next(span for span in live if not span.parent_span_id)
    attributes = attributes_of(root.attributes)
    assert attributes["gen_ai.conversation.id"] == session
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["seri.task.status"] == "done"
    chat = next(s for s in live if s.name == "chat fake/model" and s.events)
    chat_attributes = attributes_of(chat.attributes)
    assert chat_attributes["gen_ai.usage.cache_read.input_tokens"] == 7
    assert chat_attributes["gen_ai.response.id"].startswith("gen-fake-")
    assert [event.name for event in chat.events] == ["seri.retry"]
    for span in live:
        assert attributes_of(span.attributes)["seri.tag.shard"] == "7"
        assert "gen_ai.tool.call.arguments" not in attributes_of(span.attributes)
    # No content without the opt-in; the header's value went out as a header only.
    assert all(CONTENT.encode() not in raw for raw in receiver.received.raw)
    assert all(h.get("x-api-key") == HEADER_SECRET for h in receiver.received.headers)
    assert HEADER_SECRET.encode() not in b"".join(receiver.received.raw)
    assert HEADER_SECRET.encode() not in (seri_home / "seri.db").read_bytes()
    assert receiver.received.histogram_points("gen_ai.client.token.usage")
    # The same run exported later from the store: the same spans, ids and all.
    with OtlpReceiver() as again:
        assert export_otlp(run_seri, again.endpoint).returncode == 0
    assert _sorted(again.received.spans()) == live


def test_content_goes_live_only_with_the_opt_in_and_then_redacted(run_seri: RunSeri) -> None:
    # The file written holds the OTLP header's value: with content on, it is redacted.
    script = [
        {
            "tool_calls": [
                call("c1", "write_file", path="s.py", content=f"{HEADER_SECRET} # {CONTENT}\n")
            ]
        },
        {"text": "written"},
    ]
    with OtlpReceiver() as receiver:
        result = _chat(
            run_seri,
            receiver.endpoint,
            script=script,
            OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true",
        )
    assert result.returncode == 0, result.stderr
    spans = receiver.received.spans()
    written = attributes_of(
        next(s for s in spans if s.name == "execute_tool write_file").attributes
    )
    assert CONTENT in written["gen_ai.tool.call.arguments"]
    assert "[REDACTED]" in written["gen_ai.tool.call.arguments"]
    assert HEADER_SECRET.encode() not in b"".join(receiver.received.raw)


def test_with_the_recording_off_the_run_is_still_exported(run_seri: RunSeri) -> None:
    with OtlpReceiver() as receiver:
        result = _chat(run_seri, receiver.endpoint, SERI_TRAJECTORY="off")
    assert result.returncode == 0, result.stderr
    assert run_seri("trajectory", "export").stdout == ""
    assert len(receiver.received.spans()) == 11


def _timed_chat(seri_home: Path, project: Path, endpoint: str) -> tuple[float, float, str]:
    """A `seri chat -p` of three model calls: seconds to its answer on stdout, seconds to its
    exit, and its stderr."""
    script = [
        {"tool_calls": [call("g1", "glob", pattern="*")]},
        {"tool_calls": [call("g2", "glob", pattern="*.py")]},
        {"text": "the answer"},
    ]
    with FakeModel(script) as fake:
        extra = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        if endpoint:
            extra["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        started = time.monotonic()
        child = subprocess.Popen(
            [SERI, "chat", "-p", "look"],
            cwd=project,
            env=seri_env(seri_home, extra),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stderr is not None
        answer = child.stdout.readline()
        answered = time.monotonic() - started
        stderr = child.stderr.read()
        assert child.wait(timeout=60) == 0, stderr
        exited = time.monotonic() - started
    assert answer.strip() == "the answer"
    return answered, exited, stderr


@pytest.mark.parametrize("collector", ["hangs", "refuses"])
def test_a_collector_that_hangs_or_is_down_never_slows_the_run_and_is_said_once(
    collector: str, seri_home: Path, project: Path
) -> None:
    with BlackHole() as hole:
        endpoint = hole.endpoint if collector == "hangs" else refused_endpoint()
        # Interleaved, the better of two each: the machine is shared.
        off, on = [], []
        for _ in range(2):
            off.append(_timed_chat(seri_home, project, ""))
            on.append(_timed_chat(seri_home, project, endpoint))
    off_answer = min(run[0] for run in off)
    on_answer = min(run[0] for run in on)
    # The task and its answer are not held up by the collector...
    assert on_answer < off_answer + 1.0, (off_answer, on_answer)
    # ...and the process ends within the bounded wait for the last batch (2 s).
    assert min(run[1] - run[0] for run in on) < 3.5, on
    for _, _, stderr in on:
        said = [line for line in stderr.splitlines() if "telemetry" in line or "collector" in line]
        assert len(said) == 1, stderr
        assert said[0].startswith("seri: ")
        assert endpoint.removeprefix("http://") in said[0]
    assert all("telemetry" not in stderr for _, _, stderr in off)


def test_eight_concurrent_runs_land_live_as_eight_traces(
    seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    """The issue's "done when", live: eight concurrent runs, eight traces, parented, with the
    totals of the JSONL export, and the same spans a later export from the store sends."""
    with OtlpReceiver() as receiver:
        run_concurrently(
            seri_home,
            project,
            extra={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "SERI_RUN_TAGS": "fleet=8"},
        )
    spans = receiver.received.spans()
    lines = [json.loads(line) for line in run_seri("trajectory", "export").stdout.splitlines()]
    check_concurrent_traces(spans, calls_by_session(lines))
    assert all(attributes_of(s.attributes)["seri.tag.fleet"] == "8" for s in spans)
    with OtlpReceiver() as again:
        assert export_otlp(run_seri, again.endpoint).returncode == 0
    assert _sorted(again.received.spans()) == _sorted(spans)


def test_config_json_can_ask_for_live_export_and_a_bad_setting_costs_one_line(
    run_seri: RunSeri, seri_home: Path
) -> None:
    seri_home.mkdir(parents=True, exist_ok=True)
    with OtlpReceiver() as receiver:
        (seri_home / "config.json").write_text(
            json.dumps({"telemetry": {"otlp": {"endpoint": receiver.endpoint}}})
        )
        with FakeModel([{"text": "ok"}]) as fake:
            result = run_seri("chat", "-p", "hi", env=chat_env(fake))
    assert result.returncode == 0, result.stderr
    assert [span.name for span in receiver.received.spans()] == [
        "chat fake/model",
        "invoke_agent seri",
    ]
    with FakeModel([{"text": "ok"}]) as fake:
        result = run_seri(
            "chat",
            "-p",
            "hi",
            env=chat_env(fake, OTEL_EXPORTER_OTLP_PROTOCOL="grpc"),
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    (line,) = result.stderr.splitlines()
    assert line.startswith("seri: telemetry is off: OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc'")


def test_a_scripted_chat_that_clears_sends_each_run_as_its_own_traces(run_seri: RunSeri) -> None:
    """Piped stdin (no -p): two tasks, `/clear`, a third: two runs on two sessions, each
    started and finished once for the export, every task a trace of its own."""
    with OtlpReceiver() as receiver, FakeModel([{"text": f"answer {n}"} for n in range(3)]) as fake:
        result = run_seri(
            "chat",
            "--tag",
            "mode=scripted",
            input="first\nsecond\n/clear\nthird\n",
            env=chat_env(fake, OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint),
        )
    assert result.returncode == 0, result.stderr
    spans = receiver.received.spans()
    check_parenting(spans)
    roots = [span for span in spans if not span.parent_span_id]
    assert len(roots) == 3
    sessions = [attributes_of(root.attributes)["gen_ai.conversation.id"] for root in roots]
    listed = [json.loads(line)["id"] for line in run_seri("sessions", "--json").stdout.splitlines()]
    assert sorted(set(sessions)) == sorted(listed) and len(listed) == 2
    assert Counter(sessions).most_common()[0][1] == 2  # the first session's two tasks
    assert all(attributes_of(s.attributes)["seri.tag.mode"] == "scripted" for s in spans)
    with OtlpReceiver() as again:
        assert export_otlp(run_seri, again.endpoint).returncode == 0
    assert _sorted(again.received.spans()) == _sorted(spans)
