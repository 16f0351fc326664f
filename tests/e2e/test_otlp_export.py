"""`seri trajectory export --format otlp` end to end (issue 18): real runs of the installed
seri against the loopback model, exported to a loopback OTLP/HTTP receiver that decodes
with opentelemetry-proto's own messages.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from scripts.fake_model import FakeModel
from tests.conftest import SERI, RunSeri, seri_env
from tests.e2e.test_chat import KEY, call, chat_env
from tests.otlp_receiver import (
    OtlpReceiver,
    attributes_of,
    parse_json_metrics,
    parse_json_traces,
)

HEADER_SECRET = "tok-" + "5ecret" * 4  # an OTLP header value: sent, never written anywhere
CONTENT = "the-content-marker-42"


def task_script() -> list[dict[str, Any]]:
    """A task with a subagent, a written file, a denied command, a retry and a final answer."""
    return [
        {"tool_calls": [call("t1", "task", description="look", prompt="count files")]},
        {"tool_calls": [call("g1", "glob", pattern="*")]},
        {"text": "no files"},
        {
            "tool_calls": [
                call("c1", "write_file", path="a.py", content=f"print('{CONTENT}')\n"),
                call("c2", "bash", command=f"echo {CONTENT}"),
            ]
        },
        {"status": 429, "headers": {"Retry-After": "0"}},
        {"text": "done", "usage": {"prompt_tokens_details": {"cached_tokens": 7}, "cost": 0.0125}},
    ]


def _run_task(run_seri: RunSeri, script: list[dict[str, Any]] | None = None) -> str:
    with FakeModel(script or task_script()) as fake:
        result = run_seri(
            "chat", "--allow", "task", "--allow", "write_file", "-p", "do it", env=chat_env(fake)
        )
    assert result.returncode == 0, result.stderr
    return str(json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"])


@pytest.fixture(scope="module")
def seeded_profile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A profile holding one run of ``task_script()`` by the installed seri, made once per
    module (per xdist worker): the tests that export that same task copy it (``task_run``)
    instead of each running it again."""
    root = tmp_path_factory.mktemp("otlp-seed")
    home, project = root / "profile", Path(os.path.realpath(root / "project"))
    project.mkdir()
    with FakeModel(task_script()) as fake:
        args = ("chat", "--allow", "task", "--allow", "write_file", "-p", "do it")
        ran = subprocess.run(
            [SERI, *args],
            env=seri_env(home, chat_env(fake)),
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert ran.returncode == 0, ran.stderr
    listed = subprocess.run(
        [SERI, "sessions", "--json"],
        env=seri_env(home),
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return home, str(json.loads(listed.stdout.splitlines()[0])["id"])


@pytest.fixture
def task_run(seeded_profile: tuple[Path, str], seri_home: Path) -> str:
    """The test's own copy of the seeded profile (its seri.db, the task's trajectory in it):
    what ``_run_task`` would have left. Returns the session's id."""
    home, session = seeded_profile
    shutil.copytree(home, seri_home)
    return session


def export_otlp(run_seri: RunSeri, endpoint: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`seri trajectory export --format otlp` to ``endpoint``, with an API key header."""
    return run_seri(
        "trajectory",
        "export",
        "--format",
        "otlp",
        env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_EXPORTER_OTLP_HEADERS": f"x-api-key={HEADER_SECRET}",
            **env,
        },
    )


def _export(
    run_seri: RunSeri, receiver: OtlpReceiver, **env: str
) -> subprocess.CompletedProcess[str]:
    result = export_otlp(run_seri, receiver.endpoint, **env)
    assert not receiver.received.errors, receiver.received.errors
    return result


def _jsonl(run_seri: RunSeri) -> list[dict[str, Any]]:
    result = run_seri("trajectory", "export")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _by_name(spans: list[Any]) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in spans:
        found.setdefault(span.name, []).append(span)
    return found


def check_parenting(spans: list[Any]) -> None:
    by_id = {span.span_id: span for span in spans}
    assert len(by_id) == len(spans)
    roots = Counter(span.trace_id for span in spans if not span.parent_span_id)
    assert set(roots.values()) == {1}
    for span in spans:
        if span.parent_span_id:
            parent = by_id[span.parent_span_id]
            assert parent.trace_id == span.trace_id
            assert parent.start_time_unix_nano <= span.start_time_unix_nano
            assert span.end_time_unix_nano <= parent.end_time_unix_nano


def test_a_task_lands_as_one_trace_in_the_genai_shape(
    run_seri: RunSeri, seri_home: Path, task_run: str
) -> None:
    session = task_run
    with OtlpReceiver() as receiver:
        result = _export(
            run_seri,
            receiver,
            OTEL_SERVICE_NAME="ci-fleet",
            OTEL_RESOURCE_ATTRIBUTES="deployment.environment=test,team=agents",
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "sent 1 trace (11 spans)" in result.stderr
    received = receiver.received
    spans = received.spans()
    check_parenting(spans)
    assert {span.trace_id for span in spans} == {spans[0].trace_id}
    names = Counter(span.name for span in spans)
    assert names == {
        "invoke_agent seri": 2,
        "chat fake/model": 5,
        "execute_tool task": 1,
        "execute_tool glob": 1,
        "execute_tool write_file": 1,
        "execute_tool bash": 1,
    }
    by_name = _by_name(spans)
    root = next(s for s in by_name["invoke_agent seri"] if not s.parent_span_id)
    child = next(s for s in by_name["invoke_agent seri"] if s.parent_span_id)
    task_tool = by_name["execute_tool task"][0]
    assert child.parent_span_id == task_tool.span_id
    assert task_tool.parent_span_id == root.span_id
    root_attributes = attributes_of(root.attributes)
    assert root_attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root_attributes["gen_ai.agent.name"] == "seri"
    assert root_attributes["gen_ai.conversation.id"] == session
    assert root_attributes["gen_ai.provider.name"] == "openai"
    assert root_attributes["server.address"] == "127.0.0.1"
    assert root_attributes["seri.task.status"] == "done"
    assert root.kind == 1  # INTERNAL
    child_attributes = attributes_of(child.attributes)
    assert child_attributes["gen_ai.conversation.id"] != session
    assert child_attributes["seri.subagent"] is True
    # The chats under the child are the child's; the rest the parent's.
    under_child = [s for s in by_name["chat fake/model"] if s.parent_span_id == child.span_id]
    assert len(under_child) == 2
    chat = attributes_of(by_name["chat fake/model"][-1].attributes)
    assert by_name["chat fake/model"][-1].kind == 3  # CLIENT
    assert chat["gen_ai.operation.name"] == "chat"
    assert chat["gen_ai.request.model"] == "fake/model"
    assert chat["gen_ai.response.model"] == "fake/model"
    assert chat["gen_ai.response.id"].startswith("gen-fake-")
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 7
    assert chat["gen_ai.usage.cost"] == pytest.approx(0.0125)
    assert chat["gen_ai.response.finish_reasons"] == ("stop",)
    retried = by_name["chat fake/model"][-1]
    assert [e.name for e in retried.events] == ["seri.retry"]
    assert attributes_of(retried.events[0].attributes)["seri.retry.status"] == 429
    denied = by_name["execute_tool bash"][0]
    assert denied.status.code == 2
    assert attributes_of(denied.attributes)["error.type"] == "denied"
    assert [e.name for e in denied.events] == ["seri.denial"]
    written = by_name["execute_tool write_file"][0]
    assert [e.name for e in written.events] == ["seri.checkpoint", "seri.edit"]
    assert attributes_of(written.attributes)["gen_ai.tool.call.id"] == "c1"
    # The resource: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
    resource = next(iter(received.spans_with_resource()))[0]
    assert resource["service.name"] == "ci-fleet"
    assert resource["deployment.environment"] == "test"
    assert resource["team"] == "agents"
    # Content stays home without the opt-in; the header went out and nowhere else.
    assert all(CONTENT.encode() not in raw for raw in received.raw)
    for span in spans:
        assert "gen_ai.tool.call.arguments" not in attributes_of(span.attributes)
    assert all(headers.get("x-api-key") == HEADER_SECRET for headers in received.headers)
    assert all(h.get("Content-Type") == "application/x-protobuf" for h in received.headers)
    assert HEADER_SECRET not in result.stderr
    assert HEADER_SECRET.encode() not in (seri_home / "seri.db").read_bytes()


@pytest.mark.usefixtures("task_run")
def test_the_totals_match_the_jsonl_export_and_the_metrics_add_up(run_seri: RunSeri) -> None:
    lines = _jsonl(run_seri)
    calls = [line for line in lines if line["type"] in ("model_call", "summary_call")]
    with OtlpReceiver() as receiver:
        assert _export(run_seri, receiver).returncode == 0
    spans = receiver.received.spans()
    root = next(span for span in spans if not span.parent_span_id)
    totals = attributes_of(root.attributes)
    for field, key in (
        ("input_tokens", "gen_ai.usage.input_tokens"),
        ("output_tokens", "gen_ai.usage.output_tokens"),
        ("cached_tokens", "gen_ai.usage.cache_read.input_tokens"),
    ):
        assert totals[key] == sum(c["usage"][field] for c in calls)
    assert totals["seri.model_calls"] == len(calls)
    tokens = receiver.received.histogram_points("gen_ai.client.token.usage")
    by_type = {attributes_of(p.attributes)["gen_ai.token.type"]: p for p in tokens}
    assert by_type["input"].sum == sum(c["usage"]["input_tokens"] for c in calls)
    assert by_type["output"].sum == sum(c["usage"]["output_tokens"] for c in calls)
    assert by_type["input"].count == len(calls)
    durations = receiver.received.histogram_points("gen_ai.client.operation.duration")
    assert sum(p.count for p in durations) == len(calls)
    assert all(sum(p.bucket_counts) == p.count for p in [*tokens, *durations])


@pytest.mark.usefixtures("task_run")
def test_json_and_protobuf_carry_the_same_spans_and_sending_again_repeats_the_ids(
    run_seri: RunSeri,
) -> None:
    sent: dict[str, list[Any]] = {}
    for protocol in ("http/protobuf", "http/json", "http/protobuf"):
        with OtlpReceiver() as receiver:
            result = _export(run_seri, receiver, OTEL_EXPORTER_OTLP_PROTOCOL=protocol)
        assert result.returncode == 0, result.stderr
        kinds = {h.get("Content-Type") for h in receiver.received.headers}
        assert kinds == {
            "application/json" if protocol == "http/json" else "application/x-protobuf"
        }
        spans = sorted(receiver.received.spans(), key=lambda s: s.span_id)
        if protocol in sent:
            assert spans == sent[protocol]  # idempotent: same ids, same everything
        sent[protocol] = spans
    assert sent["http/json"] == sent["http/protobuf"]


def test_content_only_with_the_opt_in_and_then_redacted(run_seri: RunSeri) -> None:
    secret_line = f"print('{HEADER_SECRET}')"
    script = [
        {
            "tool_calls": [
                call("c1", "write_file", path="s.py", content=f"{secret_line} # {CONTENT}\n")
            ]
        },
        {"text": "written"},
    ]
    _run_task(run_seri, script)
    with OtlpReceiver() as receiver:
        result = _export(
            run_seri, receiver, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT="true"
        )
    assert result.returncode == 0, result.stderr
    tool = next(s for s in receiver.received.spans() if s.name == "execute_tool write_file")
    attributes = attributes_of(tool.attributes)
    assert CONTENT in attributes["gen_ai.tool.call.arguments"]
    # The recording holds the header's value (nothing told the recorder it was secret);
    # the export knows it is, and redacts it from the content it sends.
    assert HEADER_SECRET not in attributes["gen_ai.tool.call.arguments"]
    assert "[REDACTED]" in attributes["gen_ai.tool.call.arguments"]
    assert attributes["gen_ai.tool.call.result"].startswith("Created s.py")
    body_without_headers = b"".join(receiver.received.raw)
    assert HEADER_SECRET.encode() not in body_without_headers


@pytest.mark.usefixtures("task_run")
def test_without_an_endpoint_the_export_is_otlp_json_lines_on_stdout(run_seri: RunSeri) -> None:
    result = run_seri(
        "trajectory", "export", "--format", "otlp", env={"OTEL_SERVICE_NAME": "offline"}
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2  # one traces request (11 spans), one metrics request
    traces = parse_json_traces(lines[0])
    spans = [s for rs in traces.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert len(spans) == 11
    check_parenting(spans)
    metrics = parse_json_metrics(lines[1])
    names = {
        m.name for rm in metrics.resource_metrics for sm in rm.scope_metrics for m in sm.metrics
    }
    assert names == {"gen_ai.client.token.usage", "gen_ai.client.operation.duration"}


@pytest.mark.usefixtures("task_run")
def test_a_collector_that_is_down_is_one_clear_error(run_seri: RunSeri) -> None:
    with OtlpReceiver() as receiver:
        endpoint = receiver.endpoint
    started = time.monotonic()
    result = export_otlp(run_seri, endpoint.replace("http://", "http://user:pw@"))
    assert time.monotonic() - started < 15
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(
        f"seri: cannot send to {endpoint}/v1/traces (OTEL_EXPORTER_OTLP_ENDPOINT)"
    )
    assert "nothing was sent" in lines[0]
    assert HEADER_SECRET not in result.stderr and "pw@" not in result.stderr


@pytest.mark.usefixtures("task_run")
def test_a_collector_asking_to_wait_is_waited_for(run_seri: RunSeri) -> None:
    with OtlpReceiver(answers=[(503, b"busy"), (429, b"")]) as receiver:
        result = _export(run_seri, receiver)
    assert result.returncode == 0, result.stderr
    assert len(receiver.received.spans()) == 11


@pytest.mark.usefixtures("task_run")
def test_bad_otlp_settings_are_a_usage_error(run_seri: RunSeri) -> None:
    result = run_seri(
        "trajectory",
        "export",
        "--format",
        "otlp",
        env={
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        },
    )
    assert result.returncode == 2
    assert result.stderr.startswith("seri: OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc'")


def run_concurrently(
    seri_home: Path, project: Path, runs: int = 8, extra: dict[str, str] | None = None
) -> None:
    """``runs`` `seri chat -p` at once on one profile, each against its own loopback model:
    one glob call, then an answer (``extra``: more environment for each)."""
    fakes = [
        FakeModel(
            [
                {"tool_calls": [call(f"g{n}", "glob", pattern="*")]},
                {
                    "text": f"answer {n}",
                    "usage": {"prompt_tokens": 100 + n, "completion_tokens": n},
                },
            ]
        )
        for n in range(runs)
    ]
    for fake in fakes:
        fake.__enter__()
    try:
        started = [
            subprocess.Popen(
                [SERI, "chat", "-p", f"task {n}"],
                cwd=project,
                env=seri_env(
                    seri_home,
                    {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY, **(extra or {})},
                ),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n, fake in enumerate(fakes)
        ]
        outcomes = [run.communicate(timeout=120) for run in started]
    finally:
        for fake in fakes:
            fake.__exit__(None, None, None)
    assert [run.returncode for run in started] == [0] * runs, outcomes


def calls_by_session(lines: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if line["type"] in ("model_call", "summary_call"):
            found.setdefault(line["session"], []).append(line)
    return found


def test_eight_concurrent_runs_land_as_eight_traces(
    seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    """The issue's "done when": eight concurrent runs, exported: eight traces, parented,
    with the totals of the JSONL export."""
    run_concurrently(seri_home, project)
    calls = calls_by_session(_jsonl(run_seri))
    with OtlpReceiver() as receiver:
        result = _export(run_seri, receiver)
    assert result.returncode == 0, result.stderr
    check_concurrent_traces(receiver.received.spans(), calls)


def check_concurrent_traces(spans: list[Any], calls: dict[str, list[dict[str, Any]]]) -> None:
    """The spans of ``run_concurrently``'s eight runs: eight traces, parented, each with the
    totals of its session's recorded calls (``calls``, by session)."""
    check_parenting(spans)
    roots = [span for span in spans if not span.parent_span_id]
    assert len(roots) == 8
    assert len({span.trace_id for span in spans}) == 8
    assert {attributes_of(r.attributes)["gen_ai.conversation.id"] for r in roots} == set(calls)
    for root in roots:
        totals = attributes_of(root.attributes)
        recorded = calls[totals["gen_ai.conversation.id"]]
        for field in ("input_tokens", "output_tokens"):
            assert totals[f"gen_ai.usage.{field}"] == sum(c["usage"][field] for c in recorded)
        assert Counter(s.name for s in spans if s.trace_id == root.trace_id) == {
            "invoke_agent seri": 1,
            "chat fake/model": 2,
            "execute_tool glob": 1,
        }


def test_since_sends_the_tasks_that_ended_after_it_whole(
    run_seri: RunSeri, seri_home: Path
) -> None:
    from tests.trajectory_seed import add_session, record_run, store_at

    day = 86_400.0
    now = time.time()
    store = store_at(seri_home)
    add_session(store, "a" * 32, now - 10 * day)
    usage = {"input_tokens": 10, "output_tokens": 1}
    record_run(
        store,
        "a" * 32,
        now - 10 * day,
        [
            ("model_call", {"usage": usage}, now - 10 * day + 5),
            ("turn_end", {"status": "done", "turns": 1}, now - 10 * day + 6),
            ("model_call", {"usage": usage}, now - 2 * day - 60),  # begins before --since
            ("turn_end", {"status": "done", "turns": 1}, now - day),  # ends after it
        ],
        header={"model": "m/old", "interactive": False},
    )
    store.connection.close()
    since = time.strftime("%Y-%m-%d", time.gmtime(now - 2 * day))
    with OtlpReceiver() as receiver:
        result = run_seri(
            "trajectory",
            "export",
            "--format",
            "otlp",
            "--since",
            since,
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint},
        )
    assert result.returncode == 0, result.stderr
    spans = receiver.received.spans()
    assert sorted(s.name for s in spans) == ["chat m/old", "invoke_agent seri"]
    chat = next(s for s in spans if s.name == "chat m/old")
    assert chat.start_time_unix_nano < int((now - 2 * day) * 1e9)  # its original time
