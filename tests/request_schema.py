"""Validating request bodies against OpenRouter's own ChatRequest schema."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator

from tests.conftest import REPO

# OpenRouter's ChatRequest schema, vendored from shared/reference so the tests stand alone.
SCHEMA_PATH = REPO / "tests" / "schemas" / "openrouter-chat-request.schema.json"


@functools.cache
def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def assert_valid_request(body: Any) -> None:
    errors = sorted(validator().iter_errors(body), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def pairing_ok(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Every assistant tool call is answered right after it, exactly once; no orphan results."""
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            if message["tool_call_id"] not in pending:
                return False
            pending.discard(message["tool_call_id"])
            continue
        if pending:
            return False
        pending = {c["id"] for c in message.get("tool_calls") or []}
    return not pending
