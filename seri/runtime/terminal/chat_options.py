"""What `seri chat` was asked for, and the API key check: light, so that the interactive
prompt can be up before the agent's machinery is even imported."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from seri.pure.inputs.errors import SeriError

KEY_VARIABLES = ("OPENROUTER_API_KEY", "SERI_API_KEY")
# The run tags' variable (seri.pure.session.run_tags.TAGS_VARIABLE, spelt here to keep that
# unloaded).
TAGS_VARIABLE = "SERI_RUN_TAGS"
# What -p can print (--output-format): the answer, the result record, or events + record.
OUTPUT_FORMATS = ("text", "json", "stream-json")


@attrs.frozen
class ChatOptions:
    continue_last: bool = False
    resume: str = ""
    model: str = ""
    max_turns: int | None = None
    allow: tuple[str, ...] = ()
    prompt: str | None = None
    fork: bool = False
    # -p's output: text (the answer), json (the result record) or stream-json (events, then
    # the result record).
    output_format: str = "text"
    # --max-budget-usd (None: config.json's max_budget_usd, if any).
    max_budget_usd: float | None = None
    # The run's tags (seri.pure.session.run_tags), sorted by key.
    tags: tuple[tuple[str, str], ...] = ()
    # A goal (seri.pure.agent.goals): --until CMD, and what the goal run may use (None: no limit).
    until: str | None = None
    max_checks: int | None = None
    max_wall: float | None = None


def tags_asked(env: Mapping[str, str], flags: list[str]) -> tuple[tuple[str, str], ...]:
    """The run's tags from SERI_RUN_TAGS and each ``--tag`` (a BadTag names a bad one); the
    parser is loaded only when there are tags to read."""
    if not flags and not env.get(TAGS_VARIABLE, "").strip():
        return ()
    from seri.pure.session.run_tags import run_tags

    return run_tags(env.get(TAGS_VARIABLE, ""), flags)


def api_key_from(env: Mapping[str, str], base_url: str = "") -> str:
    """The key from the environment, with surrounding whitespace (a newline pasted along,
    a trailing space) taken off; a key that still cannot be sent is refused by name.

    No key is fine for a server on this machine or its network (llama.cpp, Ollama, vLLM at
    ``http://localhost:8080/v1``): requests then go without an Authorization header. For any
    other server no key is an error that names the server that wants it."""
    for name in KEY_VARIABLES:
        key = env.get(name, "").strip()
        if key:
            if not key.isascii() or any(ch.isspace() or not ch.isprintable() for ch in key):
                raise SeriError(
                    f"{name} holds a character no API key has (a space, a line break or a "
                    "non-ASCII character inside it); set it to the key alone"
                )
            return key
    from seri.pure.provider.answer_wait import is_local_server, url_host

    if is_local_server(base_url):
        return ""
    host = url_host(base_url)
    if host and not host.endswith("openrouter.ai"):
        raise SeriError(
            f"no API key for {host} (SERI_BASE_URL {base_url}): set SERI_API_KEY to the key "
            "that server expects (a server on this machine or its network needs none)"
        )
    raise SeriError(
        "no API key: set OPENROUTER_API_KEY (get one at openrouter.ai/keys) or SERI_API_KEY "
        "for another OpenAI-compatible server, e.g. `export OPENROUTER_API_KEY=sk-or-...`; "
        "a server on this machine needs none (`export SERI_BASE_URL=http://localhost:8080/v1`)"
    )
