"""Reading what goes into the frozen prompt: AGENTS.md, rules and memory files.

Read once, when seri starts on a session; nothing here is re-read mid-session.

These files come with whatever repository seri is started in, so they are read the way the
read_file tool reads: the path is resolved (every symlink followed) and must stay inside
the project (the profile directory for the global AGENTS.md and the memory files), the file
is opened without following a last-moment link and without blocking on a FIFO, and only a
regular file of at most PROMPT_FILE_CAP bytes is taken. An AGENTS.md that is a link to
``~/.ssh/id_ed25519``, a FIFO, ``/dev/zero`` or a 2 GB file is skipped with a warning;
it never reaches the provider or the store.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import attrs

from seri.io.tools.files import PathRefusedError, open_confined, resolve_in_project
from seri.pure.agent.prompt import FrozenPrompt, PromptSource, assemble_prompt
from seri.pure.agent.rules import GlobRule, RuleFile, always_on, glob_rules, parse_rule

MEMORY_DIR = "memory"
# A memory file larger than this must be consolidated before more is added.
MEMORY_CAP_BYTES = 16 * 1024


# Far beyond any real AGENTS.md or rule; a file over it is skipped, not cut.
PROMPT_FILE_CAP = 256 * 1024


@attrs.frozen
class StartupFiles:
    prompt: FrozenPrompt
    glob_rules: tuple[GlobRule, ...]
    # One line per file that was there but was skipped, for the person (stderr at start).
    warnings: tuple[str, ...] = ()


@attrs.frozen
class _Read:
    text: str = ""
    # Why a file that is there was not taken ('' when taken, or simply absent).
    skipped: str = ""


def read_prompt_file(root: Path, path: Path) -> _Read:
    """The text of ``path`` if it is a regular file of at most PROMPT_FILE_CAP bytes inside
    ``root`` once resolved; otherwise why not (absent files are not worth a word)."""
    raw = str(path)
    try:
        resolved = resolve_in_project(root, raw)
    except PathRefusedError as exc:
        where = exc.resolved or "somewhere else"
        return _Read(skipped=f"it leads to {where}, outside {os.path.realpath(root)}")
    try:
        fd = open_confined(Path(os.path.realpath(root)), resolved, os.O_RDONLY)
    except FileNotFoundError:
        return _Read()
    except PathRefusedError as exc:
        return _Read(skipped=str(exc))
    except OSError as exc:
        return _Read(skipped=f"it cannot be read ({exc.strerror or exc})")
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            return _Read(skipped=f"it is {kind} (a FIFO, device or socket is never read)")
        data = f.read(PROMPT_FILE_CAP + 1)
    if len(data) > PROMPT_FILE_CAP:
        return _Read(skipped=f"it is larger than {PROMPT_FILE_CAP // 1024} KiB")
    return _Read(data.decode("utf-8", errors="replace"))


class _Reader:
    """Reads prompt files and keeps a warning for each one skipped."""

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def read(self, label: str, root: Path, path: Path) -> str:
        result = read_prompt_file(root, path)
        if result.skipped:
            self.warnings.append(f"{label} ({path}) was not read into the prompt: {result.skipped}")
        return result.text


def project_memory_file(root: Path, project: str) -> Path:
    """Per-project memory lives in the profile, keyed by the project's path."""
    digest = hashlib.sha256(project.encode("utf-8")).hexdigest()[:16]
    return root / MEMORY_DIR / "projects" / f"{digest}.md"


def global_memory_file(root: Path) -> Path:
    return root / MEMORY_DIR / "global.md"


def read_rules(project: Path, reader: _Reader | None = None) -> list[RuleFile]:
    reader = reader or _Reader()
    directory = project / ".seri" / "rules"
    try:
        real = resolve_in_project(project, os.path.join(".seri", "rules"))
        names = sorted(name for name in os.listdir(real) if name.endswith(".md"))
    except PathRefusedError as exc:
        reader.warnings.append(
            f"rules ({directory}) were not read: they lead to {exc.resolved}, outside the project"
        )
        return []
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        reader.warnings.append(f"rules ({directory}) were not read: {exc.strerror or exc}")
        return []
    rules = []
    for name in names:
        path = directory / name
        result = read_prompt_file(project, path)
        if result.skipped:
            if not os.path.isdir(path):  # a directory named x.md is no rule file at all
                reader.warnings.append(f"rule {path} was not read: {result.skipped}")
            continue
        if result.text or os.path.exists(path):
            rules.append(parse_rule(name.removesuffix(".md"), result.text))
    return rules


def load_startup_files(
    root: Path, project: Path, extra: tuple[PromptSource, ...] = ()
) -> StartupFiles:
    """The frozen prompt's files; ``extra`` are sources made elsewhere (the skills' list)."""
    reader = _Reader()
    rules = read_rules(project, reader)
    sources = [
        PromptSource("AGENTS.md (global)", reader.read("AGENTS.md", root, root / "AGENTS.md")),
        PromptSource(
            "AGENTS.md (project)", reader.read("AGENTS.md", project, project / "AGENTS.md")
        ),
        *(PromptSource(f"rule {r.name}", r.text) for r in always_on(rules)),
        PromptSource("memory (global)", reader.read("memory", root, global_memory_file(root))),
        PromptSource(
            "memory (project)",
            reader.read("memory", root, project_memory_file(root, str(project))),
        ),
        *extra,
    ]
    return StartupFiles(
        assemble_prompt(str(project), sources), glob_rules(rules), tuple(reader.warnings)
    )
