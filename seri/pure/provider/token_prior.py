"""What a provider that has never counted a request may count for it: an upper bound from the
text itself, by character class.

Until a reply's usage measures the provider's tokenizer, requests are sized by this prior
(``seri.pure.compaction.window.Window.priced`` for turn requests, the fold's first summarizer
request). It was one token per UTF-8 byte for every text, the densest any byte-level tokenizer can
count: safe, but it priced English prose four times as dense as most tokenizers count it,
and a session never measured was cut and folded for that. The bound is now per class:

- prose (ASCII letters and whitespace: words, identifiers, indentation): 3 tokens per 4
  bytes, three times what a tokenizer usually counts for English and more than base64 or
  hexadecimal take;
- code and JSON (ASCII digits, punctuation and control characters): one token per byte, as a
  tokenizer that takes each digit or symbol alone counts them;
- wide characters (everything else: CJK, Cyrillic, accents, emoji): 3 tokens per 4 bytes,
  2.25 tokens for a Chinese or Japanese character (tokenizers count about one), 1.5 for a
  Cyrillic one.

That is never less than 3 tokens per 4 bytes: a provider up to three times as dense as
``ceil(chars / 4)`` on English (the densest the tests drive) is never undercounted, and the
first reply measures the real density.
"""

from __future__ import annotations

import string
from collections.abc import Iterable

from seri.pure.compaction.tokens import FRAMING_TOKENS, message_chars
from seri.pure.session.records import Message

# Provider tokens per UTF-8 byte of each class, at most (see the module's docstring).
PROSE_PER_BYTE = 0.75
CODE_PER_BYTE = 1.0
WIDE_PER_BYTE = 0.75
# The least any text is priced at, in provider tokens per 4 UTF-8 bytes.
LEAST_DENSITY = 4 * min(PROSE_PER_BYTE, CODE_PER_BYTE, WIDE_PER_BYTE)
# The most: what a text of digits and symbols alone is priced at.
MOST_DENSITY = 4 * max(PROSE_PER_BYTE, CODE_PER_BYTE, WIDE_PER_BYTE)

_WIDE_BYTES = bytes(range(0x80, 0x100))
_PROSE_BYTES = (string.ascii_letters + string.whitespace).encode("ascii")


def class_bytes(text: str) -> tuple[int, int, int]:
    """The UTF-8 bytes of ``text`` by class: (prose, code, wide)."""
    raw = text.encode("utf-8", "surrogatepass")
    ascii_only = raw.translate(None, _WIDE_BYTES)
    code = len(ascii_only.translate(None, _PROSE_BYTES))
    return len(ascii_only) - code, code, len(raw) - len(ascii_only)


def text_prior(text: str) -> float:
    """The most tokens a provider is assumed to count for ``text``."""
    prose, code, wide = class_bytes(text)
    return prose * PROSE_PER_BYTE + code * CODE_PER_BYTE + wide * WIDE_PER_BYTE


def message_prior(m: Message) -> float:
    """``text_prior`` over what ``message_chars`` counts of a message."""
    thinking = max(text_prior(m.reasoning), text_prior(m.reasoning_details))
    return text_prior(m.text) + thinking + sum(text_prior(c.arguments) for c in m.tool_calls)


def prior_scale(messages: Iterable[Message], overhead_local: int) -> float:
    """The scale (provider tokens per ``ceil(chars / 4)``) a request of ``messages`` and
    ``overhead_local`` tokens of system prompt and tools (priced as code: JSON) is priced at
    before any provider has counted one, with the system message's framing, which a request's
    local size does not count. At least 1 (the scale is never below it)."""
    chars = 4 * overhead_local
    tokens = overhead_local * 4 * CODE_PER_BYTE + FRAMING_TOKENS
    for m in messages:
        chars += message_chars(m)
        tokens += message_prior(m)
    return max(1.0, tokens / max(1.0, chars / 4))


def prior_density(texts: Iterable[str]) -> float:
    """Provider tokens per 4 UTF-8 bytes that ``texts`` are priced at: from ``LEAST_DENSITY``
    (prose) to ``MOST_DENSITY`` (digits and symbols alone)."""
    size = tokens = 0.0
    for text in texts:
        prose, code, wide = class_bytes(text)
        size += prose + code + wide
        tokens += prose * PROSE_PER_BYTE + code * CODE_PER_BYTE + wide * WIDE_PER_BYTE
    return 4 * tokens / size if size else LEAST_DENSITY
