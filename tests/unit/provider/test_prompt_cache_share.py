"""The benchmark's prompt-cache figure as a test: on the default model, a 40-turn session's
requests carry breakpoints and most of their input can be read from the cache."""

from __future__ import annotations

from scripts.bench.prompt_cache import figures
from seri.pure.inputs.settings import DEFAULT_MODEL


def test_a_40_turn_session_is_mostly_cacheable() -> None:
    marked = figures(DEFAULT_MODEL)
    assert marked.requests == 92
    assert marked.with_markers == 92
    assert marked.max_markers <= 4
    assert marked.cacheable_share > 0.9
    assert marked.cost_ratio > 5
    plain = figures("openai/gpt-4o")
    assert (plain.with_markers, plain.cacheable_share) == (0, 0.0)
