"""The overflow table: how each provider words "the request does not fit the context window".

This is the one file to edit to support a new provider's overflow message: add its wording to
``OVERFLOW_WORDINGS`` (and, if it states token counts, a form to ``NUMBER_PATTERNS``), each with
where it was seen, and add the real message with its source to ``tests/captures/captures.json``
(regenerate ``tests/captures/README.md``), which replays every capture through the real client.

A context overflow must be recognised whatever the status (OpenRouter wraps some in a 502),
because resending the same request only fails again; but a rate limit that talks about tokens,
or OpenAI's ``string_above_max_length``, is not one. The sources: provider-protocol.md §1.6,
reliability-anchors.md §3.2, and the captures named below (ids in tests/captures/captures.json).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from seri.pure.inputs.lazy_pattern import LazyPattern
from seri.pure.provider.provider_failure import OverflowNumbers

# Machine-readable codes (``code``, ``type``, ``error_type``, an availability ``excluded_by``)
# that mean an overflow: provider-protocol.md §1.6 (OpenAI's ``context_length_exceeded``;
# OpenRouter's typed errors and its ``constraint_filtered`` routing variant) and llama.cpp's
# ``exceed_context_size_error`` (capture llamacpp-exceed-context-size).
OVERFLOW_MARKERS = frozenset(
    {
        "context_length_exceeded",
        "exceed_context_size_error",
        "string_too_long",
        "token_limit_exceeded",
        "excluded_by:context_length",
    }
)
# A code that looks like one but is not: OpenAI's cap on one string's length (LiteLLM's
# exception mapping excludes it too, reliability-anchors.md §3.2).
NOT_OVERFLOW_MARKER = "string_above_max_length"

# Each wording with where it was seen: "capture X" is a real message in tests/captures/,
# "pi" is earendil-works/pi@17c253c:packages/ai/src/utils/overflow.ts, "§1.6" is
# shared/reference/provider-protocol.md §1.6 (tests/unit/provider/test_provider_errors.py
# OVERFLOWS).
OVERFLOW_WORDINGS: tuple[str, ...] = (
    # OpenAI, OpenRouter, vLLM, DeepSeek: capture openrouter-of-text-input, vllm-max-tokens-...
    r"maximum context length",
    # Anthropic "exceed context limit" (capture anthropic-a-plus-b), MiniMax "context window
    # exceeds limit" (capture minimax-context-window-exceeds), llama.cpp "context size".
    r"context (?:window|size|limit)",
    # OpenRouter's typed form and Together (capture together-longer-than-context).
    r"context[_ ]length",
    # Anthropic: capture anthropic-prompt-too-long-via-openrouter.
    r"prompt is too long",
    # Gemini: capture gemini-input-token-count (both wordings).
    r"input token count.*exceeds the maximum",
    r"exceeds the maximum number of tokens allowed",
    # xAI: capture xai-maximum-prompt-length.
    r"maximum prompt length is \d+",
    # LiteLLM's list ("maximum input length is … tokens"), reliability-anchors.md §3.2.
    r"maximum input length is \d+",
    # Groq, and OpenAI's older wording: capture openai-context-length-exceeded.
    r"reduce the length of the (?:messages|input)",
    # vLLM engine: "The decoder prompt (length 8825) is longer than the maximum model length",
    # §1.6 (vllm/entrypoints/openai/serving_engine.py).
    r"is longer than the maximum model length",
    # Together: capture together-longer-than-context.
    r"is longer than the model's context length",
    # Ollama's native API with truncate off: "the input length exceeds the context length", §1.6.
    r"input length.*exceeds.*context length",
    # Mistral: capture mistral-too-large.
    r"too large for model with \d+ maximum context length",
    # LM Studio, older builds: "... is greater than the context length" (pi; §1.6).
    r"greater than the context length",
    # Anthropic "A + B > C" (capture bedrock-via-openrouter-a-plus-b), OpenAI Responses
    # (capture openai-exceeds-context-window).
    r"exceed(?:s|ed)? (?:the )?context",
    # Kimi / Moonshot: capture kimi-exceeded-model-token-limit.
    r"exceeded model token limit",
    # Moonshot: capture moonshot-model-max-length.
    r"model max length exceeded",
    # Alibaba DashScope: captures dashscope-range-of-input-length, dashscope-qwen-code.
    r"range of input length should be \[",
    # LM Studio: captures lmstudio-cannot-truncate, lmstudio-opencode, lmstudio-continue.
    r"cannot truncate prompt with n_keep",
    # Poolside, Baseten via OpenRouter: capture poolside-maximum-allowed-input-length.
    r"exceeds (?:the )?maximum allowed input length",
    # vLLM v0.8+: capture vllm-requested-output-tokens.
    r"requested \d+ output tokens and your prompt contains",
    # A generic fallback (pi); Bedrock's throttling "Too many tokens, please wait" is told
    # apart by NOT_OVERFLOW_TEXTS.
    r"too many tokens",
    # reliability-anchors.md §3.2 (the wordings OpenRouter's own clients check).
    r"input tokens exceed",
    # Bedrock: capture bedrock-input-too-long.
    r"input is too long for requested model",
    # GitHub Copilot: capture copilot-prompt-token-count.
    r"prompt token count of \d+ exceeds the limit",
    # Ollama: capture ollama-prompt-too-long.
    r"prompt too long; exceeded",
    # OpenRouter's advice in its overflow message: captures openrouter-of-text-input and
    # openrouter-of-tool-input.
    r"middle-out",
    r"context-compression plugin",
)
_OVERFLOW_TEXTS = LazyPattern("|".join(OVERFLOW_WORDINGS), re.IGNORECASE | re.DOTALL)

# Rate limits that talk about tokens ("Request too large for gpt-4 ... on tokens per min",
# capture groq-413-tpm-lookalike), and OpenAI's cap on one string's length, look like
# overflows but compacting does not cure them.
NOT_OVERFLOW_TEXTS = LazyPattern(
    r"rate[ _-]?limit|tokens per min|\bTPM\b|requests per min|string_above_max_length",
    re.IGNORECASE,
)


def says_overflow(texts: Iterable[str], markers: frozenset[str], status: int | None) -> bool:
    """Whether an error's strings and codes say the request does not fit the window.

    ``texts`` are every string of the error body (``metadata.raw`` unpacked), ``markers`` its
    machine-readable codes, lower-cased.
    """
    texts = tuple(texts)
    if NOT_OVERFLOW_MARKER in markers:
        return False
    if any(NOT_OVERFLOW_TEXTS.search(text) for text in texts):
        return False
    if markers & OVERFLOW_MARKERS:
        return True
    if status == 413:
        return True
    return any(_OVERFLOW_TEXTS.search(text) for text in texts)


# "maximum context length is 131072": the window, for a form that states only the split.
_LIMIT = LazyPattern(r"(?:maximum )?context length (?:is|of) (\d+)", re.IGNORECASE)

# Forms that state the window and the split between input and output, wherever they arrive.
# The names: "limit" the window, "requested" the total asked for, "text" and "tool" the input,
# "output" the output budget. A form without a "limit" group borrows it from _LIMIT.
NUMBER_PATTERNS: tuple[tuple[LazyPattern, tuple[str, ...]], ...] = (
    # OpenRouter: "(148000 of text input, 2211 in the output)" or with ", 380 of tool input"
    # (captures openrouter-of-text-input, openrouter-of-tool-input).
    (
        LazyPattern(
            r"(?:requested (?:about )?(\d+) tokens )?\((\d+) of text input(?:, (\d+) of tool "
            r"input)?, (\d+) in the output\)",
            re.IGNORECASE,
        ),
        ("requested", "text", "tool", "output"),
    ),
    # Anthropic direct and via Bedrock/OpenRouter: "input length and `max_tokens` exceed context
    # limit: 149674 + 64000 > 204658" (captures bedrock-via-openrouter-a-plus-b,
    # anthropic-a-plus-b).
    (LazyPattern(r"(\d+) \+ (\d+) > (\d+)"), ("text", "output", "limit")),
    # OpenAI, vLLM, DeepSeek: "you requested 9100 tokens (8100 in the messages, 1000 in the
    # completion)" (capture openai-context-length-exceeded).
    (
        LazyPattern(
            r"requested (\d+) tokens \((\d+) in the messages, (\d+) in the completion\)",
            re.IGNORECASE,
        ),
        ("requested", "text", "output"),
    ),
    # vLLM: "'max_tokens' or 'max_completion_tokens' is too large: 2000. This model's maximum
    # context length is 4096 tokens and your request has 2104 input tokens" (capture
    # vllm-max-tokens-too-large).
    (
        LazyPattern(
            r"is too large: (\d+)\. This model's maximum context length is (\d+) tokens and "
            r"your request has (\d+) input tokens",
            re.IGNORECASE,
        ),
        ("output", "limit", "text"),
    ),
    # vLLM: "you requested 4093 output tokens and your prompt contains at least 61444 input
    # tokens" (capture vllm-requested-output-tokens).
    (
        LazyPattern(
            r"requested (\d+) output tokens and your prompt contains (?:at least )?(\d+) input",
            re.IGNORECASE,
        ),
        ("output", "text"),
    ),
    # vLLM current: "maximum context length is 32768 tokens. However, your request has 40000
    # input tokens" (§1.6), and OpenAI's older "your messages resulted in N tokens".
    (
        LazyPattern(
            r"maximum context length is (\d+) tokens.*?(?:messages resulted in|request has) "
            r"(\d+) (?:input )?tokens",
            re.IGNORECASE | re.DOTALL,
        ),
        ("limit", "text"),
    ),
    # Anthropic: "prompt is too long: 213462 tokens > 200000 maximum" (capture
    # anthropic-prompt-too-long-via-openrouter).
    (LazyPattern(r"prompt is too long: (\d+) tokens > (\d+)", re.IGNORECASE), ("text", "limit")),
    # llama.cpp: "request (932 tokens) exceeds the available context size (512 tokens)"
    # (capture llamacpp-exceed-context-size).
    (
        LazyPattern(
            r"request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # Gemini: capture gemini-input-token-count.
    (
        LazyPattern(
            r"input token count \((\d+)\) exceeds the maximum number of tokens allowed \((\d+)\)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # Kimi / Moonshot: "exceeded model token limit: 262144 (requested: 269030)" (capture
    # kimi-exceeded-model-token-limit).
    (
        LazyPattern(r"model token limit: (\d+) \(requested: (\d+)\)", re.IGNORECASE),
        ("limit", "requested"),
    ),
    # LM Studio: "Cannot truncate prompt with n_keep (14169) >= n_ctx (4096)" (capture
    # lmstudio-cannot-truncate).
    (LazyPattern(r"n_keep \((\d+)\) >= n_ctx \((\d+)\)", re.IGNORECASE), ("text", "limit")),
    # Poolside / Baseten: "Input length 140000 exceeds the maximum allowed input length of
    # 131072 tokens." (capture poolside-maximum-allowed-input-length).
    (
        LazyPattern(
            r"input length (\d+) exceeds (?:the )?maximum allowed input length of (\d+)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # Together: "The input (X tokens) is longer than the model's context length (Y tokens)"
    # (capture together-longer-than-context).
    (
        LazyPattern(
            r"input \((\d+) tokens\) is longer than the model'?s context length \((\d+)",
            re.IGNORECASE,
        ),
        ("text", "limit"),
    ),
    # xAI: "maximum prompt length is 131072 but the request contains 537812 tokens" (capture
    # xai-maximum-prompt-length).
    (
        LazyPattern(
            r"maximum prompt length is (\d+) but the request contains (\d+)", re.IGNORECASE
        ),
        ("limit", "text"),
    ),
    # GitHub Copilot: capture copilot-prompt-token-count.
    (
        LazyPattern(r"prompt token count of (\d+) exceeds the limit of (\d+)", re.IGNORECASE),
        ("text", "limit"),
    ),
    # DashScope: "Range of input length should be [1, 983616]" (capture
    # dashscope-range-of-input-length).
    (LazyPattern(r"range of input length should be \[\d+, (\d+)\]", re.IGNORECASE), ("limit",)),
    # Moonshot: "model max length exceeded, max length:8192" (capture moonshot-model-max-length).
    (LazyPattern(r"max length exceeded, max length:\s*(\d+)", re.IGNORECASE), ("limit",)),
    # Any other "maximum context length is N" (OpenAI, OpenRouter): the window alone.
    (LazyPattern(r"maximum context length is (\d+)", re.IGNORECASE), ("limit",)),
)


def overflow_numbers(text: str) -> OverflowNumbers:
    """The token counts an overflow message states (all ``None`` when it states none)."""
    for pattern, names in NUMBER_PATTERNS:
        found = pattern.search(text)
        if found is None:
            continue
        values = {
            name: int(group) for name, group in zip(names, found.groups(), strict=True) if group
        }
        if "limit" not in values:
            limit = _LIMIT.search(text)
            if limit is not None:
                values["limit"] = int(limit.group(1))
        text_tokens = values.get("text")
        tool_tokens = values.get("tool", 0)
        return OverflowNumbers(
            limit=values.get("limit"),
            requested=values.get("requested"),
            input_tokens=None if text_tokens is None else text_tokens + tool_tokens,
            output_tokens=values.get("output"),
        )
    return OverflowNumbers()


def overflow_numbers_in_fields(error: Mapping[str, object]) -> OverflowNumbers:
    """llama.cpp's ``exceed_context_size_error`` states its numbers as fields too; its older
    wording ("the request exceeds the available context size. try increasing the context size
    or enable context shift") has them nowhere else (captures llamacpp-older-wording-fields,
    llamacpp-older-wording-400)."""
    prompt, window = error.get("n_prompt_tokens"), error.get("n_ctx")

    def count(value: object) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
        return None

    return OverflowNumbers(limit=count(window), input_tokens=count(prompt))
