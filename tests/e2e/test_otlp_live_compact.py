"""Live OTLP export from `seri compact`: the compaction run lands as it would from a chat.

A real older-release session is imported and compacted by a real `seri compact` subprocess
against the loopback model, with OTEL_EXPORTER_OTLP_ENDPOINT naming the loopback receiver
(tests/otlp_receiver.py, decoding with opentelemetry-proto). The spans arrive parented (one
``compaction`` root, its summarizer calls inside), and `seri trajectory export --format otlp`
of the stored run later sends exactly the same spans, ids and all.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri
from tests.e2e.test_chat import chat_env
from tests.e2e.test_compact_learned_window import MODEL, import_meridian
from tests.e2e.test_otlp_export import HEADER_SECRET, check_parenting, export_otlp
from tests.otlp_receiver import OtlpReceiver, attributes_of


def _sorted(spans: list[Any]) -> list[Any]:
    return sorted(spans, key=lambda span: span.span_id)


def test_a_seri_compact_run_lands_live_as_the_stored_export_would_send_it(
    run_seri: RunSeri, seri_home: Path
) -> None:
    session_id = import_meridian(seri_home)
    (seri_home / "config.json").write_text(json.dumps({"context_window": 32_768}))
    script = [{"text": '{"goal": "build Meridian"}', "repeat": 60}]
    with OtlpReceiver() as receiver, FakeModel(script) as fake:
        env = chat_env(
            fake,
            SERI_MODEL=MODEL,
            OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint,
            OTEL_EXPORTER_OTLP_HEADERS=f"x-api-key={HEADER_SECRET}",
        )
        ran = run_seri("compact", "--session", session_id, env=env)
        summaries = len(fake.requests)
    assert ran.returncode == 0, ran.stderr
    assert "telemetry" not in ran.stderr
    assert not receiver.received.errors
    live = _sorted(receiver.received.spans())
    check_parenting(live)
    assert summaries >= 2
    assert Counter(span.name for span in live) == {
        "compaction": 1,
        f"chat {MODEL}": summaries,
    }
    [root] = [span for span in live if not span.parent_span_id]
    assert root.name == "compaction"
    assert attributes_of(root.attributes)["gen_ai.conversation.id"] == session_id
    assert all(h.get("x-api-key") == HEADER_SECRET for h in receiver.received.headers)
    assert HEADER_SECRET.encode() not in b"".join(receiver.received.raw)
    # The same run exported later from the store: the same spans, ids and all.
    with OtlpReceiver() as again:
        assert export_otlp(run_seri, again.endpoint).returncode == 0
    assert _sorted(again.received.spans()) == live
