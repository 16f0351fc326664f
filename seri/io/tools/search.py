"""The glob and grep tools: finding files and text in the project.

Both walk the tree themselves (never following directory symlinks, so a link cannot lead
the walk out of the project or into a loop), skip ``.git``, visit entries in sorted order so
results are reproducible, and stop at fixed caps so a huge tree cannot flood the context.

grep is confined like read_file, for every file its walk visits and not only for the path
it was given: the walk goes through directory descriptors (``os.fwalk``), each file is
opened relative to its directory without following a link, a file symlink is followed only
when it resolves inside the project (checked again on the open descriptor), only regular
files are read, and a file that the permission rules deny to read_file or grep is not
searched. Each call has a time limit: the pattern comes from the model, and one that
backtracks catastrophically ends the call with an error instead of hanging seri.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from seri.io.tools.files import (
    PathRefusedError,
    is_within,
    iter_lines,
    open_confined,
    relative_name,
    resolve_in_project,
)
from seri.pure.tools.glob_match import GlobError, compile_glob
from seri.pure.tools.tool_outcome import ToolOutcome, failure, outcome

MAX_GLOB_RESULTS = 1_000
MAX_GREP_MATCHES = 500
MAX_OUTPUT_BYTES = 50_000
MAX_MATCH_LINE_CHARS = 500
MAX_WALK_ENTRIES = 200_000
MAX_LINE_BYTES = 1_000_000
GREP_SECONDS = 10.0
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
    try:
        regex = compile_glob(cleaned.rstrip("/") or ".", paths=True)
    except GlobError as exc:
        return failure(f"{exc}; write a range low to high, as in [0-9]", outcome="bad_pattern")
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


def grep_files(
    root: Path,
    pattern: str,
    raw_path: str = ".",
    *,
    hidden: Callable[[str], bool] | None = None,
    seconds: float = GREP_SECONDS,
) -> ToolOutcome:
    """Lines matching the regular expression, as ``path:line:text``.

    ``hidden`` says, for a project-relative path, that the file must not be read (a deny
    rule); such files are skipped and counted. ``seconds`` bounds the whole call.
    """
    import regex

    try:
        compiled = regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return failure(f"invalid regular expression {pattern!r}: {exc}", outcome="bad_pattern")
    try:
        start = resolve_in_project(root, raw_path)
    except PathRefusedError as exc:
        return failure(f"refused: {exc}", outcome="refused", resolved=exc.resolved)
    if not start.exists():
        return failure(f"{raw_path} does not exist", outcome="not_found")

    search = _Search(root, compiled, time.monotonic() + seconds, hidden)
    try:
        search.run(start)
    except TimeoutError:
        return failure(
            f"grep stopped after {seconds:g} s: the pattern {pattern!r} takes too long on this "
            f"text (nested repetition such as (a+)+ backtracks without end); simplify it. "
            f"{len(search.lines)} matching lines were found before it stopped.",
            outcome="timeout",
            matches=len(search.lines),
            files_searched=search.searched,
        )
    lines = search.lines
    matches = len(lines)
    if search.truncated:
        lines.append(f"[… stopped after {matches} matches; narrow the pattern or the path …]")
    elif not lines:
        lines.append(f"No matches for {pattern!r} in {raw_path}.")
    if search.denied:
        lines.append(
            f"[{search.denied} file(s) not searched: your permission rules deny reading them]"
        )
    return outcome(
        "\n".join(lines),
        matches=matches,
        files_searched=search.searched,
        truncated=search.truncated,
        denied=search.denied,
    )


class _Search:
    """One grep call's walk, its results and its deadline."""

    def __init__(
        self, root: Path, compiled: Any, deadline: float, hidden: Callable[[str], bool] | None
    ) -> None:
        self.root = root
        self.compiled = compiled
        self.deadline = deadline
        self.hidden = hidden
        self.lines: list[str] = []
        self.size = 0
        self.searched = 0
        self.denied = 0
        self.truncated = False

    def run(self, start: Path) -> None:
        for rel, fd in _files_under(self.root, start, self._allowed):
            self.searched += 1
            with os.fdopen(fd, "rb") as f:
                self._search(rel, f)
            if self.truncated:
                return

    def _allowed(self, rel: str) -> bool:
        if self.hidden is not None and self.hidden(rel):
            self.denied += 1
            return False
        return True

    def _search(self, rel: str, f: Any) -> None:
        if b"\0" in f.read(_SNIFF_BYTES):
            return  # binary
        f.seek(0)
        for number, (raw, _) in enumerate(iter_lines(f, MAX_LINE_BYTES), start=1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not self.compiled.search(text, timeout=remaining):
                continue
            line = f"{rel}:{number}:{_clip(text)}"
            self.size += len(line.encode()) + 1
            if len(self.lines) >= MAX_GREP_MATCHES or self.size > MAX_OUTPUT_BYTES:
                self.truncated = True
                return
            self.lines.append(line)


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


def _files_under(
    root: Path, start: Path, allowed: Callable[[str], bool]
) -> Iterator[tuple[str, int]]:
    """(project-relative path, open descriptor) of each regular file to search: ``start``
    itself, or every one below it, in sorted order; ``allowed`` vetoes by path."""
    if not start.is_dir():
        opened = _open_file(root, start, allowed)
        if opened is not None:
            yield opened
        return
    for dirpath, dirnames, filenames, dirfd in os.fwalk(start, follow_symlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if not allowed(relative_name(root, path)):
                continue
            try:
                fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=dirfd)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    continue
                # A file symlink: followed only to a regular file inside the project.
                opened = _open_file(root, Path(os.path.realpath(path)), allowed)
                if opened is not None:
                    yield relative_name(root, path), opened[1]
                continue
            if _regular(fd):
                yield relative_name(root, path), fd


_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK


def _open_file(root: Path, real: Path, allowed: Callable[[str], bool]) -> tuple[str, int] | None:
    """A resolved path, opened only if inside the project, allowed and a regular file."""
    if not is_within(root, real) or not allowed(relative_name(root, real)):
        return None
    try:
        fd = open_confined(root, real, os.O_RDONLY)
    except (OSError, PathRefusedError):
        return None
    return (relative_name(root, real), fd) if _regular(fd) else None


def _regular(fd: int) -> bool:
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return True
    os.close(fd)
    return False


def _clip(text: str) -> str:
    if len(text) <= MAX_MATCH_LINE_CHARS:
        return text
    return text[:MAX_MATCH_LINE_CHARS] + f"… [{len(text) - MAX_MATCH_LINE_CHARS} more chars]"
