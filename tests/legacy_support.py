"""Shared by the store, import and property tests: legacy session lines, the
pairing invariant, and small helpers around a real profile on disk."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from seri.pure.session.records import Message

FIXTURES = Path(__file__).resolve().parent / "fixtures"
LEGACY_FIXTURES = FIXTURES / "legacy-sessions"
FIXTURE_NAMES = ("a1b2c3d4-hello.jsonl", "c9d0e1f2-torn.jsonl", "e5f6a7b8-tools.jsonl")
SYSTEM = "You are seri, a coding agent working in the user's repository."


# --- legacy lines (the AI SDK ModelMessage form of DESIGN.md) -------------------------------


def header(session_id: str, cwd: str = "/home/ana/src/shop", **extra: Any) -> dict[str, Any]:
    return {
        "id": session_id,
        "cwd": cwd,
        "systemPrompt": SYSTEM,
        "permissionMode": "ask",
        **extra,
    }


def system_line(text: str = SYSTEM) -> dict[str, Any]:
    return {"role": "system", "content": text}


def user_line(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_line(text: str = "", calls: Sequence[tuple[str, str, Any]] = ()) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [
        {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": args}
        for call_id, name, args in calls
    ]
    return {"role": "assistant", "content": parts}


def tool_line(results: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    return {
        "role": "tool",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": call_id,
                "toolName": name,
                "output": {"type": "text", "value": value},
            }
            for call_id, name, value in results
        ],
    }


def jsonl(lines: Iterable[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


# --- the invariant every imported (and every stored) history must satisfy ------------------


def pairing_violations(messages: Sequence[Message]) -> list[str]:
    """Every assistant tool call is answered exactly once by the tool messages that
    immediately follow it; no tool message answers anything else."""
    problems: list[str] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        if message.role == "tool":
            problems.append(f"[{i}] orphan tool result for {message.tool_call_id!r}")
            i += 1
            continue
        if message.role == "assistant" and message.tool_calls:
            ids = [call.id for call in message.tool_calls]
            if len(set(ids)) != len(ids):
                problems.append(f"[{i}] duplicate tool call ids {ids}")
            if any(not call.id or not call.name for call in message.tool_calls):
                problems.append(f"[{i}] a tool call without id or name")
            j = i + 1
            answered: list[str] = []
            while j < len(messages) and messages[j].role == "tool":
                answered.append(messages[j].tool_call_id)
                j += 1
            if sorted(answered) != sorted(set(ids)):
                problems.append(f"[{i}] calls {sorted(ids)} answered by {answered}")
            i = j
            continue
        i += 1
    return problems


def assert_paired(messages: Sequence[Message]) -> None:
    problems = pairing_violations(messages)
    assert not problems, "pairing invariant broken:\n" + "\n".join(problems)


# --- files -------------------------------------------------------------------------------


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_identity(path: Path) -> tuple[str, int, int, int, int]:
    """Bytes, inode, size, mtime (ns) and mode: all must survive an import untouched."""
    info = os.stat(path)
    return sha256(path), info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode


def copy_fixtures(home: Path, mtime: float | None = None) -> Path:
    """The three shared legacy fixtures in ``home/sessions``; optionally with a fixed mtime."""
    sessions = home / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    for offset, name in enumerate(FIXTURE_NAMES):
        target = sessions / name
        shutil.copyfile(LEGACY_FIXTURES / name, target)
        if mtime is not None:
            os.utime(target, (mtime + offset * 60, mtime + offset * 60))
    return sessions
