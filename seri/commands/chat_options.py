"""What `seri chat` was asked for, and the API key check: light, so that the interactive
prompt can be up before the agent's machinery is even imported."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from seri.pure.errors import SeriError

KEY_VARIABLES = ("OPENROUTER_API_KEY", "SERI_API_KEY")


@attrs.frozen
class ChatOptions:
    continue_last: bool = False
    resume: str = ""
    model: str = ""
    max_turns: int | None = None
    allow: tuple[str, ...] = ()
    prompt: str | None = None


def api_key_from(env: Mapping[str, str]) -> str:
    for name in KEY_VARIABLES:
        if env.get(name):
            return env[name]
    raise SeriError(
        "no API key: set OPENROUTER_API_KEY (get one at openrouter.ai/keys) or SERI_API_KEY "
        "for another OpenAI-compatible server, e.g. `export OPENROUTER_API_KEY=sk-or-...`"
    )
