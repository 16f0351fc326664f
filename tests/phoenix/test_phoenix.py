"""Eight concurrent runs exported to Phoenix and read back through its REST API: eight
root `invoke_agent seri` spans, every parent present, the JSONL export's token totals, and
the same spans (not twice as many) after sending everything again."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import RunSeri
from tests.e2e.test_otlp_export import calls_by_session, export_otlp, run_concurrently
from tests.phoenix.conftest import Phoenix

PROJECT = "seri-fleet"


def _export(run_seri: RunSeri, phoenix: Phoenix) -> None:
    # Phoenix takes traces only, and files them under the project this attribute names.
    result = export_otlp(
        run_seri,
        phoenix.url,
        OTEL_METRICS_EXPORTER="none",
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={PROJECT}",
    )
    assert result.returncode == 0, result.stderr


def _spans(phoenix: Phoenix, expected: int) -> list[dict[str, Any]]:
    """The project's spans, once Phoenix has stored ``expected`` of them (it files what it
    receives in the background) or a minute has gone."""
    deadline = time.monotonic() + 60
    spans: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        answer = httpx.get(
            f"{phoenix.url}/v1/projects/{PROJECT}/spans", params={"limit": 1000}, timeout=30
        )
        if answer.status_code == 200:
            spans = answer.json()["data"]
            if len(spans) >= expected:
                return spans
        time.sleep(0.5)
    return spans


def test_eight_runs_read_back_from_phoenix(
    phoenix: Phoenix, seri_home: Path, project: Path, run_seri: RunSeri
) -> None:
    run_concurrently(seri_home, project)
    lines = [json.loads(line) for line in run_seri("trajectory", "export").stdout.splitlines()]
    calls = calls_by_session(lines)
    _export(run_seri, phoenix)
    spans = _spans(phoenix, 8 * 4)
    assert len(spans) == 8 * 4
    by_id = {span["context"]["span_id"]: span for span in spans}
    roots = [span for span in spans if not span["parent_id"]]
    assert len(roots) == 8
    assert {root["name"] for root in roots} == {"invoke_agent seri"}
    for span in spans:
        if span["parent_id"]:
            parent = by_id[span["parent_id"]]
            assert parent["context"]["trace_id"] == span["context"]["trace_id"]
    for root in roots:
        attributes = root["attributes"]
        recorded = calls[attributes["gen_ai.conversation.id"]]
        assert attributes["gen_ai.usage.input_tokens"] == sum(
            c["usage"]["input_tokens"] for c in recorded
        )
        assert attributes["gen_ai.usage.output_tokens"] == sum(
            c["usage"]["output_tokens"] for c in recorded
        )
        names = Counter(
            s["name"] for s in spans if s["context"]["trace_id"] == root["context"]["trace_id"]
        )
        assert names == {"invoke_agent seri": 1, "chat fake/model": 2, "execute_tool glob": 1}
    # Sending the same recordings again: Phoenix keeps one span per id.
    _export(run_seri, phoenix)
    time.sleep(3)  # time enough for Phoenix to have filed duplicates, were there any
    assert len(_spans(phoenix, 8 * 4)) == 8 * 4
