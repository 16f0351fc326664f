"""Installing the peers into .cache/bench/ and finding their programs.

npm: @openai/codex, @anthropic-ai/claude-code, opencode-ai (one prefix). PyPI: llm, in
its own virtual environment. A failed install (no network, no npm) is recorded, never
raised: the rows that need that peer then say "peer unavailable".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.common import CACHE, log

NPM_PREFIX = CACHE / "npm"
NPM_PACKAGES = ("@openai/codex", "@anthropic-ai/claude-code", "opencode-ai")
LLM_VENV = CACHE / "llm-venv"
INSTALL_TIMEOUT = 300


@dataclass(frozen=True)
class Program:
    name: str
    argv: tuple[str, ...] | None
    problem: str = ""  # why argv is None

    @property
    def available(self) -> bool:
        return self.argv is not None


def _run(argv: list[str], timeout: float) -> str:
    """Run an install step; returns '' on success, else the reason it failed."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        return f"{argv[0]} not found"
    except subprocess.TimeoutExpired:
        return f"{' '.join(argv[:2])} timed out after {timeout} s"
    if done.returncode != 0:
        tail = [line for line in done.stderr.splitlines() if line.strip()][-1:] or [""]
        return f"{' '.join(argv[:2])} exited {done.returncode}: {tail[0][:120]}"
    return ""


def _bin(name: str) -> Path:
    return NPM_PREFIX / "node_modules" / ".bin" / name


def install_npm() -> dict[str, str]:
    """Install what is missing; returns {package: problem} for those that failed."""
    wanted = {
        "@openai/codex": "codex",
        "@anthropic-ai/claude-code": "claude",
        "opencode-ai": "opencode",
    }
    missing = [pkg for pkg, binary in wanted.items() if not _bin(binary).exists()]
    if not missing:
        return {}
    log(f"installing {', '.join(missing)} with npm into {NPM_PREFIX}")
    NPM_PREFIX.mkdir(parents=True, exist_ok=True)
    base = [
        "npm",
        "install",
        "--prefix",
        str(NPM_PREFIX),
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]
    problem = _run([*base, *missing], INSTALL_TIMEOUT)
    if not problem:
        return {}
    # One failure must not take the others down with it: try them one by one.
    problems = {}
    for pkg in missing:
        one = _run([*base, pkg], INSTALL_TIMEOUT)
        if one or not _bin(wanted[pkg]).exists():
            problems[pkg] = one or "installed, but its program is missing"
    return problems


def install_llm() -> str:
    """Create .cache/bench/llm-venv with llm in it; returns '' or the problem."""
    llm = LLM_VENV / "bin" / "llm"
    if llm.exists():
        return ""
    log(f"installing llm from PyPI into {LLM_VENV}")
    problem = _run([sys.executable, "-m", "venv", str(LLM_VENV)], 120)
    if problem:
        return problem
    problem = _run(
        [str(LLM_VENV / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "llm"],
        INSTALL_TIMEOUT,
    )
    if problem:
        return problem
    return "" if llm.exists() else "pip finished but bin/llm is missing"


def _native_codex() -> Path | None:
    """The Rust binary the npm launcher (node) starts: the platform package's vendor/…/codex."""
    root = NPM_PREFIX / "node_modules" / "@openai"
    if not root.is_dir():
        return None
    for candidate in sorted(root.glob("codex*/vendor/*/bin/codex")) + sorted(
        root.glob("codex*/vendor/*/codex/codex")
    ):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def install_all() -> dict[str, Program]:
    """Install the peers (once; later runs reuse .cache/bench) and return their programs."""
    npm_problems = install_npm()
    llm_problem = install_llm()
    programs: dict[str, Program] = {}
    for key, pkg, binary in (
        ("codex", "@openai/codex", "codex"),
        ("claude", "@anthropic-ai/claude-code", "claude"),
        ("opencode", "opencode-ai", "opencode"),
    ):
        path = _bin(binary)
        if path.exists():
            programs[key] = Program(key, (str(path),))
        else:
            programs[key] = Program(key, None, npm_problems.get(pkg, f"{path} missing"))
    native = _native_codex()
    programs["codex-native"] = (
        Program("codex-native", (str(native),))
        if native
        else Program("codex-native", None, "native codex binary not found")
    )
    llm = LLM_VENV / "bin" / "llm"
    programs["llm"] = (
        Program("llm", (str(llm),)) if llm.exists() else Program("llm", None, llm_problem)
    )
    return programs


# The llm logs database, seeded through llm's own migrations and table layout.
_SEED_LLM = """
import json, sys, uuid
import sqlite_utils
from llm.migrations import migrate
db = sqlite_utils.Database(sys.argv[1])
migrate(db)
count = int(sys.argv[2])
conversations, responses = [], []
for i in range(count):
    cid = uuid.uuid4().hex
    conversations.append({"id": cid, "name": f"make handler_{i} skip rows", "model": "gpt-4o-mini"})
    responses.append({
        "id": uuid.uuid4().hex, "model": "gpt-4o-mini",
        "prompt": f"Task {i}: make handler_{i} skip rows that are not ok",
        "system": "You are a helpful coding assistant.", "prompt_json": None,
        "options_json": "{}", "response": "Done: handler_%d now filters on row.ok. " % i * 4,
        "response_json": json.dumps({"id": f"chatcmpl-{i}"}), "conversation_id": cid,
        "duration_ms": 900 + i % 500,
        "datetime_utc": "2025-06-15T12:%02d:%02d" % (i // 60 % 60, i % 60),
        "input_tokens": 120, "output_tokens": 80, "token_details": None,
        "schema_id": None, "resolved_model": None,
    })
db["conversations"].insert_all(conversations)
db["responses"].insert_all(responses, alter=True)
print(db["responses"].count)
"""


def seed_llm_logs(llm: Program, user_path: Path, count: int) -> str:
    """Fill $LLM_USER_PATH/logs.db with ``count`` responses; returns '' or the problem."""
    assert llm.argv is not None
    python = Path(llm.argv[0]).with_name("python")
    user_path.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            [str(python), "-c", _SEED_LLM, str(user_path / "logs.db"), str(count)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "seeding llm's logs.db timed out"
    if done.returncode != 0:
        return "seeding llm's logs.db failed: " + (done.stderr.strip().splitlines() or [""])[-1]
    return ""


def version_of(stdout: bytes) -> str:
    """The first line a --version printed, shortened for the table."""
    text = stdout.decode("utf-8", "replace").strip().splitlines()
    return text[0][:40] if text else "?"


def describe_install() -> str:
    """Installed versions from the npm lock, for the notes under the table."""
    lock = NPM_PREFIX / "package-lock.json"
    if not lock.exists():
        return ""
    packages = json.loads(lock.read_text()).get("packages", {})
    found = [
        f"{name.removeprefix('node_modules/')} {info.get('version', '?')}"
        for name, info in packages.items()
        if name.removeprefix("node_modules/") in NPM_PACKAGES
    ]
    return ", ".join(found)
