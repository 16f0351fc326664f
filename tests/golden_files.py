"""Golden files: compare what a test got with its reviewed file, or rewrite the file.

``make golden`` sets SERI_REGEN_GOLDEN=1 to rewrite every golden file instead of comparing;
the diff (``git diff tests/golden``) is then reviewed like code.
"""

from __future__ import annotations

import os
from pathlib import Path


def check_golden(path: Path, got: str) -> None:
    """``got`` matches ``path`` byte for byte, or (under ``make golden``) becomes it."""
    if os.environ.get("SERI_REGEN_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run `make golden` and review it"
    assert got == path.read_text(encoding="utf-8"), f"{path.name} differs from {path}:\n{got}"
