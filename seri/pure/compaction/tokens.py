"""How large a history is, in the rough units the compaction trigger needs.

The estimate is the larger of two numbers: the input tokens the provider billed for the last
call, and a local count of ``ceil(characters / 4)``. Billed counts are exact but lag one call
behind and can freeze when a provider stops reporting usage; the character count is always
current but only approximate. Taking the maximum errs towards compacting early.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from seri.pure.session.records import Message

# Four characters a token is the usual rule of thumb for English text and code.
CHARS_PER_TOKEN = 4


def message_chars(m: Message) -> int:
    """Characters of one message that count towards the history estimate.

    Counted, as the spec lists them:

    * the text (for a tool message, the text *is* the tool result);
    * the thinking: the larger of ``reasoning`` and ``reasoning_details``. Providers return
      thinking as plain text, as raw reasoning blocks that wrap the same text (or an encrypted
      form of it), or as both, so counting one of them avoids counting it twice;
    * the raw JSON arguments string of every tool call.

    Not counted: roles, tool names and call ids. They are a few characters a message and the
    spec leaves them out. Lengths are in code points (``len``), not bytes.
    """
    thinking = max(len(m.reasoning), len(m.reasoning_details))
    arguments = sum(len(call.arguments) for call in m.tool_calls)
    return len(m.text) + thinking + arguments


# What a request's JSON spends on each message besides its text (role, keys, call ids, the
# tool call's wrapper), in local tokens: the provider counts it, ``ceil(chars / 4)`` does not.
# About 80 bytes for a tool result, 130 for an assistant message with a call; the scale
# learned from a real request covers the average, this the variance from one to the next.
FRAMING_TOKENS = 8


def sized_tokens(messages: Sequence[Message]) -> int:
    """The local size of ``messages`` as compaction sizes them: ``ceil(chars / 4)`` and each
    message's framing (the trigger's estimate stays the spec's, without framing)."""
    return estimate_tokens(messages_chars(messages)) + FRAMING_TOKENS * len(messages)


def utf8_size(text: str) -> int:
    """The UTF-8 bytes of ``text`` (a lone surrogate counted as its three bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


def message_bytes(m: Message) -> int:
    """``message_chars`` in UTF-8 bytes: what a tokenizer's vocabulary is built on, so that a
    count by bytes is about as dense for Chinese or Russian as for English."""
    thinking = max(utf8_size(m.reasoning), utf8_size(m.reasoning_details))
    arguments = sum(utf8_size(call.arguments) for call in m.tool_calls)
    return utf8_size(m.text) + thinking + arguments


def bytes_per_char(messages: Iterable[Message]) -> float:
    """UTF-8 bytes per character over ``messages``' counted text: 1 for English and code, up to
    3 for Chinese or Japanese, 2 for Russian. Tokenizers count such text denser than
    ``chars / 4`` by about that much: it turns a scale measured in characters into a density
    in bytes (``seri.pure.compaction.summarizer_fold.SummaryFold``)."""
    chars = total = 0
    for m in messages:
        chars += message_chars(m)
        total += message_bytes(m)
    return max(1.0, total / chars) if chars else 1.0


def messages_chars(messages: Iterable[Message]) -> int:
    """The sum of ``message_chars`` over a whole history (the store keeps it incrementally)."""
    return sum(message_chars(m) for m in messages)


def estimate_tokens(chars: int) -> int:
    """``ceil(chars / 4)``, in integers so that large counts never meet float rounding."""
    if chars < 0:
        raise ValueError(f"a character count cannot be negative: {chars}")
    return -(-chars // CHARS_PER_TOKEN)


def history_estimate(last_billed_input_tokens: int, total_chars: int) -> int:
    """The trigger's view of the history: the larger of the billed and the local count.

    ``total_chars`` should cover everything that is sent: the stored messages and the frozen
    system prompt, which is never evicted but still fills the window.
    """
    return max(last_billed_input_tokens, estimate_tokens(total_chars))


def should_compact(estimate: int, context_window: int) -> bool:
    """True when the estimate is at least half the context window."""
    if context_window <= 0:
        raise ValueError(f"a context window must be positive: {context_window}")
    # 2 * estimate >= window is "at least half" without rounding an odd window.
    return 2 * estimate >= context_window
