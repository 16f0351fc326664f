"""Spill files: the whole text of a cut result, kept for the model to page through."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import attrs

from seri.io.compaction.spill import keep_text
from seri.io.tools.tools import ToolContext, run_tool


def contexts(tmp_path: Path) -> tuple[ToolContext, Path]:
    project, spill = tmp_path / "project", tmp_path / "profile" / "spill"
    project.mkdir()
    return ToolContext(project=project, spill_dir=spill), spill


def test_a_kept_text_is_one_private_file_per_content(tmp_path: Path) -> None:
    spill = tmp_path / "spill"
    first = keep_text(spill, "line\n" * 1000)
    assert first and Path(first).read_text() == "line\n" * 1000
    assert stat.S_IMODE(os.stat(first).st_mode) == 0o600
    assert keep_text(spill, "line\n" * 1000) == first
    assert keep_text(spill, "other") != first
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    assert keep_text(blocked / "spill", "x") == ""


def test_read_file_pages_through_a_spill_file_outside_the_project(tmp_path: Path) -> None:
    ctx, spill = contexts(tmp_path)
    path = keep_text(spill, "".join(f"row {n}\n" for n in range(1, 5001)))
    first = run_tool("read_file", {"path": path, "limit": 10}, ctx)
    assert not first.is_error and first.text.startswith("     1\trow 1\n")
    later = run_tool("read_file", {"path": path, "offset": 4000, "limit": 2}, ctx)
    assert later.text.startswith("  4000\trow 4000\n  4001\trow 4001")


def test_only_the_spill_directory_is_readable_outside_the_project(tmp_path: Path) -> None:
    ctx, spill = contexts(tmp_path)
    keep_text(spill, "x")
    secret = tmp_path / "profile" / "config.json"
    secret.write_text("{}")
    refused = run_tool("read_file", {"path": str(secret)}, ctx)
    assert refused.is_error and "outside the project" in refused.text
    (spill / "link").symlink_to(secret)
    through_link = run_tool("read_file", {"path": str(spill / "link")}, ctx)
    assert through_link.is_error and "outside the project" in through_link.text
    writing = run_tool("write_file", {"path": str(spill / "new.txt"), "content": "x"}, ctx)
    assert writing.is_error and not (spill / "new.txt").exists()


def test_a_tool_keeps_within_the_windows_cap(tmp_path: Path) -> None:
    ctx, _ = contexts(tmp_path)
    (ctx.project / "big.txt").write_text("".join(f"line {n}\n" for n in range(20_000)))
    capped = run_tool("read_file", {"path": "big.txt"}, attrs.evolve(ctx, max_output_chars=4_000))
    assert len(capped.text) <= 4_000
    assert "continue with offset=" in capped.text
    shell = run_tool("bash", {"command": "seq 1 100000"}, attrs.evolve(ctx, max_output_chars=4_000))
    assert len(shell.text) <= 4_000 + 400
    assert shell.text.startswith("1\n2\n") and "100000" in shell.text


def test_a_spill_directory_that_is_a_symlink_opens_nothing(tmp_path: Path) -> None:
    """review-1 N3: with $SERI_HOME/spill a symlink (to /, to $HOME), read_file read any
    file below its target, from any project. Now nothing is read through it, and nothing is
    written into its target."""
    ctx, spill = contexts(tmp_path)
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    (elsewhere / "id_rsa").write_text("PRIVATE KEY")
    # Even a file named like a spill file, in the symlink's target, is not one.
    lookalike = elsewhere / "result-0123456789abcdef01234567.txt"
    lookalike.write_text("not seri's")
    spill.parent.mkdir(parents=True)
    spill.symlink_to(elsewhere, target_is_directory=True)
    for target in (spill / "id_rsa", lookalike, spill / lookalike.name):
        read = run_tool("read_file", {"path": str(target)}, ctx)
        assert read.is_error and "outside the project" in read.text, read.text
    assert keep_text(spill, "whole text") == ""
    shown = run_tool("bash", {"command": "seq 1 200000"}, attrs.evolve(ctx, max_output_chars=2_000))
    assert not shown.is_error
    assert sorted(p.name for p in elsewhere.iterdir()) == ["id_rsa", lookalike.name]


def test_only_seris_own_files_in_the_spill_directory_are_readable(tmp_path: Path) -> None:
    ctx, spill = contexts(tmp_path)
    kept = Path(keep_text(spill, "kept\n"))
    (spill / "notes.txt").write_text("someone else's file")
    (tmp_path / "profile" / "config.json").write_text("{}")
    allowed = run_tool("read_file", {"path": str(kept)}, ctx)
    assert not allowed.is_error and "kept" in allowed.text
    # Through a symlinked parent of the spill directory: the same directory, still readable.
    (tmp_path / "alias").symlink_to(tmp_path / "profile", target_is_directory=True)
    via_alias = run_tool("read_file", {"path": str(tmp_path / "alias" / "spill" / kept.name)}, ctx)
    assert not via_alias.is_error and "kept" in via_alias.text
    for refused in (spill / "notes.txt", spill / ".." / "config.json"):
        read = run_tool("read_file", {"path": str(refused)}, ctx)
        assert read.is_error and "outside the project" in read.text, read.text


def test_paging_reaches_the_middle_of_one_long_line(tmp_path: Path) -> None:
    """review-1 N1: a 206,000-character single-line result (minified JSON, base64) was cut
    with "offset=1" and read_file then showed its first 2,000 characters and nothing more:
    the middle could not be reached. A spill file's long lines are numbered in pieces of
    2,000 characters, in the marker's offset and in read_file alike."""
    from seri.pure.compaction.result_cap import cap_result

    ctx, spill = contexts(tmp_path)
    text = "A" * 3_000 + "B" * 200_000 + "C" * 3_000
    path = keep_text(spill, text)
    cut = cap_result(text, 8_000, path)
    offset = int(cut.split("offset=")[1].split(" ")[0])
    assert "long lines count a line per 2,000 characters" in cut
    head = cut.split("\n[…")[0]
    assert offset == len(head) // 2_000 + 1
    page = run_tool("read_file", {"path": path, "offset": offset, "limit": 3}, ctx)
    assert not page.is_error, page.text
    first = page.text.splitlines()[0]
    assert first.startswith(f"{offset:6}\t") and len(first.split("\t")[1]) == 2_000
    assert "B" * 2_000 in page.text and "line cut" not in page.text
    # Every character is reachable, in order: the pages put the text back together.
    pieces = []
    start = 1
    while True:
        read = run_tool("read_file", {"path": path, "offset": start}, ctx)
        rows = [row for row in read.text.splitlines() if not row.startswith("[…")]
        pieces += [row.split("\t", 1)[1] for row in rows]
        if "continue with offset=" not in read.text:
            break
        start = int(read.text.rsplit("offset=", 1)[1].split(" ")[0])
    assert "".join(pieces) == text
    assert len(pieces) == 103
