"""The file tools through a file port (an editor's buffers, seri.io.tools.file_port): seri's own
rules refuse before the port is asked (outside the project, a protected path, over the size
cap, a directory), and what passes reads and writes the port, never the disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seri.io.tools.file_port import FilePortError
from seri.io.tools.tools import ToolContext, run_tool
from seri.pure.tools.tool_specs import FILE_CAP_BYTES


class Buffers:
    """A port over a dict of texts; records every path it was asked about."""

    reads = True
    writes = True

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.asked: list[str] = []

    def read_text(self, path: Path) -> str:
        self.asked.append(str(path))
        if str(path) not in self.texts:
            raise FilePortError("no such buffer")
        return self.texts[str(path)]

    def write_text(self, path: Path, text: str) -> None:
        self.asked.append(str(path))
        self.texts[str(path)] = text


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".seri").mkdir(parents=True)
    (root / "a.txt").write_text("disk\n")
    return Path(os.path.realpath(root))


def test_rules_refuse_before_the_port_is_asked(ws: Path) -> None:
    port = Buffers({})
    ctx = ToolContext(ws, protected=(ws / ".seri",), files=port)
    refused = [
        run_tool("write_file", {"path": "../x.txt", "content": "x"}, ctx),
        run_tool("read_file", {"path": "../x.txt"}, ctx),
        run_tool("write_file", {"path": ".seri/config.json", "content": "{}"}, ctx),
        run_tool("edit", {"path": ".seri/c", "old_string": "a", "new_string": "b"}, ctx),
        run_tool("write_file", {"path": "big.txt", "content": "x" * (FILE_CAP_BYTES + 1)}, ctx),
        run_tool("read_file", {"path": "."}, ctx),
    ]
    assert all(r.is_error for r in refused), [r.text for r in refused]
    assert port.asked == []
    assert not (ws / "big.txt").exists() and not (ws.parent / "x.txt").exists()


def test_reads_and_writes_go_to_the_port_not_the_disk(ws: Path) -> None:
    port = Buffers({str(ws / "a.txt"): "buffer\n"})
    ctx = ToolContext(ws, files=port)
    assert "buffer" in run_tool("read_file", {"path": "a.txt"}, ctx).text
    edited = run_tool("edit", {"path": "a.txt", "old_string": "buffer", "new_string": "ed"}, ctx)
    assert not edited.is_error and port.texts[str(ws / "a.txt")] == "ed\n"
    assert (ws / "a.txt").read_text() == "disk\n"


def test_a_port_that_fails_fails_the_tool_and_the_disk_is_untouched(ws: Path) -> None:
    port = Buffers({})
    ctx = ToolContext(ws, files=port)
    read = run_tool("read_file", {"path": "a.txt"}, ctx)
    edit = run_tool("edit", {"path": "a.txt", "old_string": "disk", "new_string": "x"}, ctx)
    assert read.is_error and "the editor did not read a.txt: no such buffer" in read.text
    assert edit.is_error and "the editor did not read a.txt" in edit.text
    assert (ws / "a.txt").read_text() == "disk\n"
