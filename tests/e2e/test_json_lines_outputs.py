"""Every JSON Lines output of the installed seri, with text that holds U+2028, U+2029 and
U+0085 (valid raw in JSON, line breaks to ``str.splitlines()``): each line read with
``splitlines()`` is one whole JSON value."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.fake_model import FakeModel
from tests.conftest import RunSeri

BREAKERS = "one\u2028two\u2029three\x85four"


def _lines_hold(name: str, stdout: str) -> list[object]:
    lines = stdout.splitlines()
    assert lines, f"{name}: no output"
    assert len(lines) == stdout.count("\n"), f"{name}: a record was split by splitlines()"
    return [json.loads(line) for line in lines]


def test_every_json_lines_output_survives_splitlines(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    # The trajectory keeps tool output, not the conversation's text: a file holds them too.
    (project / "notes.txt").write_text(BREAKERS)
    read = {"id": "r1", "name": "read_file", "arguments": {"path": "notes.txt"}}
    script = [{"tool_calls": [read]}, {"text": f"answer {BREAKERS}"}, {"text": f"again {BREAKERS}"}]
    with FakeModel(script) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        outputs = {}
        for fmt in ("stream-json", "json"):
            run = run_seri("chat", "-p", f"ask {BREAKERS}", "--output-format", fmt, env=env)
            assert run.returncode == 0, run.stderr
            outputs[fmt] = run.stdout
    records = _lines_hold("stream-json", outputs["stream-json"])
    assert any(BREAKERS in json.dumps(r, ensure_ascii=False) for r in records)
    _lines_hold("json", outputs["json"])
    listed = _lines_hold("sessions --json", run_seri("sessions", "--json").stdout)
    session = str(listed[0]["id"])  # type: ignore[index]
    assert run_seri("pin", "--session", session, f"pin {BREAKERS}").returncode == 0
    for args in (
        ("sessions", "show", session, "--json"),
        ("sessions", "export", session),
        ("sessions", "search", "answer", "--json"),
        ("trajectory", "export"),
        ("trajectory", "export", "--format", "atif"),
        ("rewind", "--session", session, "--list", "--json"),
        ("pin", "--session", session, "--list", "--json"),
    ):
        run = run_seri(*args)
        assert run.returncode == 0, (args, run.stderr)
        values = _lines_hold(" ".join(args), run.stdout)
        if args[1] != "search":  # a search hit shows a snippet around the words found
            assert any(BREAKERS in json.dumps(v, ensure_ascii=False) for v in values), args
