"""Running a pure effect generator in a test, answering each effect as the interpreter would."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any


def drive(generator: Generator[Any, Any, Any], answer: Callable[[Any], Any]) -> Any:
    """Run ``generator`` to its end, sending back ``answer(effect)`` for each effect."""
    try:
        effect = next(generator)
        while True:
            effect = generator.send(answer(effect))
    except StopIteration as stop:
        return stop.value
