"""The older release's files as its own code wrote them (tests/fixtures/legacy-written/):
denials, bare-string and null outputs, malformed inputs, header-only files, recaps, images.

Imported through the installed `seri`; resumed against the loopback fake, whose requests must
validate against OpenRouter's schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from scripts.fake_model import FakeModel
from seri.pure.session.legacy import DENIED_RESULT, NO_OUTPUT, parse_legacy_file
from seri.pure.session.legacy_media import FILE_PLACEHOLDER_END, IMAGE_PLACEHOLDER_END
from tests.conftest import FIXTURES, RunSeri
from tests.request_schema import assert_valid_request, pairing_ok

WRITTEN = FIXTURES / "legacy-written"


def _install(home: Path, project: Path) -> None:
    """The files, their cwd pointed at the test's project so that they are listed there."""
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    for path in sorted(WRITTEN.glob("*.jsonl")):
        lines = path.read_text().splitlines()
        head = json.loads(lines[0]) | {"cwd": str(project)}
        (sessions / path.name).write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")


def _show(run_seri: RunSeri, prefix: str) -> list[dict[str, Any]]:
    shown = run_seri("sessions", "show", prefix, "--json")
    assert shown.returncode == 0, shown.stderr
    return [json.loads(line) for line in shown.stdout.splitlines()][1:]


def test_each_shape_parses_as_what_it_means() -> None:
    def parse(name: str) -> Any:
        path = next(WRITTEN.glob(f"{name}*.jsonl"))
        return parse_legacy_file(path.name, path.read_bytes())

    denied = parse("7c1e0a01")
    assert denied.header.permission_mode == "read-only"
    assert denied.header.model == ""
    result = denied.messages[2]
    assert result.is_error
    assert result.text.startswith(DENIED_RESULT) and "permission mode: read-only" in result.text

    outputs = {m.tool_call_id: m for m in parse("7c1e0a02").messages if m.role == "tool"}
    assert outputs["call_r1"].text == "# Shop\n\nA small web shop.\n", "a bare string is the text"
    assert outputs["call_g1"].text == NO_OUTPUT and not outputs["call_g1"].is_error
    assert outputs["call_b1"].is_error and "cancelled by the user" in outputs["call_b1"].text
    assert outputs["call_b2"].is_error and outputs["call_b2"].text == DENIED_RESULT

    malformed = parse("7c1e0a03").messages[1].tool_calls[0]
    assert malformed.arguments == '{"path": "notes.txt", "content": "first line\\nsecond'

    assert parse("7c1e0a04").messages == ()

    compacted = parse("7c1e0a05").messages
    assert compacted[0].kind == "recap"
    assert [m.role for m in compacted[2:4]] == ["user", "user"]

    image = parse("7c1e0a06")
    assert f"[an image (image/png, 70 bytes) {IMAGE_PLACEHOLDER_END}" in image.messages[0].text
    assert any("image part was replaced" in w for w in image.warnings)

    # A tool result's images: the same placeholder, with the media type and the PNG's size.
    tool_image = parse("7c1e0a07")
    result = tool_image.messages[2]
    assert result.role == "tool" and not result.is_error
    assert result.text.splitlines() == [
        "logo.png, 1x1",
        f"[an image (image/png, 68 bytes) {IMAGE_PLACEHOLDER_END}",
        f"[an image (image/png, 68 bytes) {IMAGE_PLACEHOLDER_END}",
        f"[a file (application/pdf, 9 bytes) {FILE_PLACEHOLDER_END}",
    ]
    assert "iVBORw0KGgo" not in result.text, "the base64 data went to the model as text"
    assert sum("in a tool result was replaced" in w for w in tool_image.warnings) == 3


def test_imported_listed_titled_and_header_only_files_left_out(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    _install(seri_home, project)
    listed = run_seri("sessions", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "image part was replaced by a placeholder" in listed.stderr
    assert "imported 6 sessions" in listed.stderr
    sessions = {row["id"]: row for row in map(json.loads, listed.stdout.splitlines())}
    assert "7c1e0a04-header-only" not in sessions, "a header-only file is listed"
    assert len(sessions) == 6
    # The title is the first thing the person asked, not the compaction recap before it.
    assert sessions["7c1e0a05-compacted"]["title"] == "fix the failing cart test"
    report = run_seri("sessions", "import")
    assert "7c1e0a04-header-only.jsonl" in report.stdout and "header only" in report.stdout
    assert report.returncode == 0
    denied = _show(run_seri, "7c1e0a01")
    assert denied[2]["is_error"] is True and "not permitted to run" in denied[2]["text"]


def test_continue_never_picks_a_header_only_file(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    sessions = seri_home / "sessions"
    _install(seri_home, project)
    # The header-only file is the newest one: --continue must still take a real session.
    (sessions / "7c1e0a04-header-only.jsonl").touch()
    with FakeModel([{"text": "continued"}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
        result = run_seri("chat", "--continue", "-p", "go on", env=env)
    assert result.returncode == 0, result.stderr
    assert "7c1e0a04" not in result.stderr


def test_a_resumed_import_sends_valid_requests(
    run_seri: RunSeri, seri_home: Path, project: Path
) -> None:
    """Malformed input goes out as `{}` (its raw text stays in the store), denials as error
    results with their reason, recaps and doubled user lines as they are."""
    _install(seri_home, project)
    requests: list[dict[str, Any]] = []
    for prefix in ("7c1e0a01", "7c1e0a02", "7c1e0a03", "7c1e0a05", "7c1e0a06", "7c1e0a07"):
        with FakeModel([{"text": "ok"}]) as fake:
            env = {"SERI_BASE_URL": fake.base_url, "SERI_API_KEY": "k" * 12}
            result = run_seri("chat", "--resume", prefix, "-p", "go on", env=env)
            requests.extend(fake.requests)
        assert result.returncode == 0, (prefix, result.stderr)
    for body in requests:
        assert_valid_request(body)
        assert pairing_ok(body["messages"][1:])
        for message in body["messages"]:
            for call in message.get("tool_calls") or ():
                assert isinstance(json.loads(call["function"]["arguments"]), dict)
    malformed_call = requests[2]["messages"][2]["tool_calls"][0]
    assert malformed_call["function"]["arguments"] == "{}"
    stored = _show(run_seri, "7c1e0a03")[1]["tool_calls"][0]["arguments"]
    assert stored.endswith('"content": "first line\\nsecond'), "the raw text was not kept"
    denial = requests[0]["messages"][3]
    assert denial["role"] == "tool" and "not permitted to run" in denial["content"]
    assert requests[1]["messages"][3]["content"] != "null"
    image_result = requests[5]["messages"][3]
    assert image_result["role"] == "tool" and "iVBORw0KGgo" not in json.dumps(requests[5])
    assert f"[an image (image/png, 68 bytes) {IMAGE_PLACEHOLDER_END}" in image_result["content"]


def test_files_stay_untouched(run_seri: RunSeri, seri_home: Path, project: Path) -> None:
    _install(seri_home, project)
    before = {p.name: p.read_bytes() for p in (seri_home / "sessions").iterdir()}
    run_seri("sessions")
    after = {p.name: p.read_bytes() for p in (seri_home / "sessions").iterdir()}
    assert before == after
    shutil.rmtree(seri_home / "sessions")
