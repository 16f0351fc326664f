"""Run tags end to end (issue 18): SERI_RUN_TAGS and `seri chat --tag` reach the session
(`sessions list/show --json`), the trajectory header and every exported span; a bad tag is
refused before anything is written. Real `seri` subprocesses against the loopback model and
a loopback OTLP receiver.
"""

from __future__ import annotations

import json
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import call, chat_env
from tests.e2e.test_otlp_export import export_otlp
from tests.otlp_receiver import OtlpReceiver, attributes_of

TAGS = {"experiment": "baseline", "shard": "3", "ci.job": "1234"}


def _chat(run_seri: RunSeri, *args: str, **env: str) -> Any:
    script = [
        {"tool_calls": [call("t1", "task", description="look", prompt="count")]},
        {"tool_calls": [call("g1", "glob", pattern="*")]},
        {"text": "none"},
        {"text": "done"},
    ]
    with FakeModel(script) as fake:
        return run_seri("chat", "--allow", "task", *args, "-p", "go", env=chat_env(fake, **env))


def test_tags_reach_the_session_the_header_and_every_span(run_seri: RunSeri) -> None:
    result = _chat(
        run_seri,
        "--tag",
        "shard=3",
        "--tag",
        "ci.job=1234",
        SERI_RUN_TAGS="experiment=baseline, shard=1,",
    )
    assert result.returncode == 0, result.stderr
    listed = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])
    assert listed["tags"] == TAGS  # --tag shard=3 won over the variable's shard=1
    shown = json.loads(run_seri("sessions", "show", listed["id"], "--json").stdout.splitlines()[0])
    assert shown["tags"] == TAGS
    human = run_seri("sessions", "show", listed["id"]).stdout
    assert "tags       ci.job=1234 experiment=baseline shard=3" in human
    lines = [json.loads(line) for line in run_seri("trajectory", "export").stdout.splitlines()]
    assert lines[0]["type"] == "header"
    assert lines[0]["tags"] == TAGS
    with OtlpReceiver() as receiver:
        assert export_otlp(run_seri, receiver.endpoint).returncode == 0
    spans = receiver.received.spans()
    assert len(spans) >= 6  # two agents, chats and tools, the subagent's included
    for span in spans:
        found = {
            k: v for k, v in attributes_of(span.attributes).items() if k.startswith("seri.tag")
        }
        assert found == {f"seri.tag.{key}": value for key, value in TAGS.items()}, span.name
    # A subagent's session carries its parent's tags.
    child = next(s for s in spans if s.name == "invoke_agent seri" and s.parent_span_id)
    child_id = attributes_of(child.attributes)["gen_ai.conversation.id"]
    child_head = run_seri("sessions", "show", child_id, "--json").stdout.splitlines()[0]
    assert json.loads(child_head)["tags"] == TAGS


def test_a_resumed_session_adds_the_new_runs_tags_and_a_fork_keeps_them(
    run_seri: RunSeri,
) -> None:
    assert _chat(run_seri, "--tag", "round=1", "--tag", "team=a").returncode == 0
    session = json.loads(run_seri("sessions", "--json").stdout.splitlines()[0])["id"]
    with FakeModel([{"text": "again"}]) as fake:
        resumed = run_seri(
            "chat", "--resume", session, "--tag", "round=2", "-p", "more", env=chat_env(fake)
        )
    assert resumed.returncode == 0, resumed.stderr
    with FakeModel([{"text": "forked"}]) as fake:
        forked = run_seri("chat", "--resume", session, "--fork", "-p", "more", env=chat_env(fake))
    assert forked.returncode == 0, forked.stderr
    rows = {
        row["id"]: row
        for row in map(json.loads, run_seri("sessions", "--json").stdout.splitlines())
    }
    assert rows[session]["tags"] == {"round": "2", "team": "a"}
    (fork,) = (row for sid, row in rows.items() if sid != session)
    assert fork["tags"] == {"round": "2", "team": "a"}
    headers = [
        line["tags"]
        for line in map(
            json.loads, run_seri("trajectory", "export", "--session", session).stdout.splitlines()
        )
        if line["type"] == "header"
    ]
    assert headers == [{"round": "1", "team": "a"}, {"round": "2"}]  # each run its own


def test_a_bad_tag_is_refused_by_name_before_anything_is_written(run_seri: RunSeri) -> None:
    for args, env, named in (
        (("--tag", "shard"), {}, "'shard' in --tag"),
        (("--tag", "9x=1"), {}, "'9x=1' in --tag"),
        ((), {"SERI_RUN_TAGS": "ok=1,bad value"}, "'bad value' in SERI_RUN_TAGS"),
    ):
        result = _chat(run_seri, *args, **env)
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.splitlines()
        assert line.startswith("seri: bad run tag ") and named in line
        assert "KEY=VALUE" in line or "letter" in line
    assert run_seri("sessions", "--json").stdout == ""
