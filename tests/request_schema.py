"""Validating request bodies against OpenRouter's own ChatRequest schema."""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator

from tests.conftest import REPO

SCHEMA_PATH = REPO.parent / "shared" / "reference" / "openrouter-chat-request.schema.json"


@functools.cache
def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


def assert_valid_request(body: Any) -> None:
    errors = sorted(validator().iter_errors(body), key=lambda e: list(e.path))
    assert not errors, "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
