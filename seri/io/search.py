"""The glob and grep tools: finding files and text in the project.

Both walk the tree themselves with ``os.walk`` (never following directory
symlinks, so a link cannot lead the walk out of the project or into a loop),
skip ``.git``, visit entries in sorted order so results are reproducible, and
stop at fixed caps so a huge tree cannot flood the context.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from seri.io.files import (
    PathRefusedError,
    is_within,
    iter_lines,
    relative_name,
    resolve_in_project,
)
from seri.pure.glob_match import compile_glob
from seri.pure.tool_outcome import ToolOutcome, failure, outcome

MAX_GLOB_RESULTS = 1_000
MAX_GREP_MATCHES = 500
MAX_OUTPUT_BYTES = 50_000
MAX_MATCH_LINE_CHARS = 500
MAX_WALK_ENTRIES = 200_000
MAX_LINE_BYTES = 1_000_000
SKIPPED_DIRS = frozenset({".git"})
_SNIFF_BYTES = 8_192


def glob_files(root: Path, pattern: str) -> ToolOutcome:
    """Files and directories matching ``pattern``, relative to the project, sorted."""
    cleaned = pattern.strip().removeprefix("./")
    if cleaned.startswith(("/", "~")) or ".." in cleaned.split("/"):
        return failure(
            f"glob pattern {pattern!r} must stay inside the project: "
            "use a relative pattern such as `src/**/*.py`",
            outcome="refused",
        )
    dirs_only = cleaned.endswith("/")  # "src/*/" asks for directories, as in a shell
    regex = compile_glob(cleaned.rstrip("/") or ".", paths=True)
    found: list[str] = []
    walked = 0
    for rel, is_dir in _walk(root):
        walked += 1
        if walked > MAX_WALK_ENTRIES:
            break
        if (is_dir or not dirs_only) and regex.fullmatch(rel):
            found.append(rel + "/" if is_dir else rel)
    found.sort()
    shown = found[:MAX_GLOB_RESULTS]
    lines = list(shown)
    if not found:
        lines.append(f"No files match {pattern!r}.")
    if len(found) > len(shown):
        lines.append(f"[… {len(found) - len(shown)} more matches not shown; narrow the pattern …]")
    if walked > MAX_WALK_ENTRIES:
        lines.append(
            f"[stopped after scanning {MAX_WALK_ENTRIES} entries; results may be incomplete]"
        )
    return outcome(
        "\n".join(lines),
        matches=len(found),
        shown=len(shown),
        truncated=len(found) > len(shown) or walked > MAX_WALK_ENTRIES,
    )


def grep_files(root: Path, pattern: str, raw_path: str = ".") -> ToolOutcome:
    """Lines matching the regular expression, as ``path:line:text``."""
    try:
        regex = re.compile(pattern)
    except re.error as exc:
        return failure(f"invalid regular expression {pattern!r}: {exc}", outcome="bad_pattern")
    try:
        start = resolve_in_project(root, raw_path)
    except PathRefusedError as exc:
        return failure(f"refused: {exc}", outcome="refused", resolved=exc.resolved)
    if not start.exists():
        return failure(f"{raw_path} does not exist", outcome="not_found")

    lines: list[str] = []
    size = 0
    searched = 0
    truncated = False
    for path in _files_under(root, start):
        searched += 1
        for number, text in _matching_lines(path, regex):
            line = f"{relative_name(root, path)}:{number}:{_clip(text)}"
            size += len(line.encode()) + 1
            if len(lines) >= MAX_GREP_MATCHES or size > MAX_OUTPUT_BYTES:
                truncated = True
                break
            lines.append(line)
        if truncated:
            break
    matches = len(lines)
    if truncated:
        lines.append(f"[… stopped after {matches} matches; narrow the pattern or the path …]")
    elif not lines:
        lines.append(f"No matches for {pattern!r} in {raw_path}.")
    return outcome("\n".join(lines), matches=matches, files_searched=searched, truncated=truncated)


def _walk(root: Path) -> Iterator[tuple[str, bool]]:
    """Every entry below root as (relative path, is a directory), skipping .git."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        base = relative_name(root, Path(dirpath))
        prefix = "" if base == "." else base + "/"
        for name in dirnames:
            yield prefix + name, True
        for name in sorted(filenames):
            yield prefix + name, False


def _files_under(root: Path, start: Path) -> Iterator[Path]:
    """Regular files to search: ``start`` itself, or every one below it."""
    if not start.is_dir():
        yield start
        return
    for dirpath, dirnames, filenames in os.walk(start, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            # A file symlink may point anywhere; follow it only if it stays inside.
            if path.is_symlink() and not is_within(root, os.path.realpath(path)):
                continue
            yield path


def _matching_lines(path: Path, regex: re.Pattern[str]) -> Iterator[tuple[int, str]]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return
    with os.fdopen(fd, "rb") as f:
        if b"\0" in f.read(_SNIFF_BYTES):
            return  # binary
        f.seek(0)
        for number, (raw, _) in enumerate(iter_lines(f, MAX_LINE_BYTES), start=1):
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            if regex.search(text):
                yield number, text


def _clip(text: str) -> str:
    if len(text) <= MAX_MATCH_LINE_CHARS:
        return text
    return text[:MAX_MATCH_LINE_CHARS] + f"… [{len(text) - MAX_MATCH_LINE_CHARS} more chars]"
