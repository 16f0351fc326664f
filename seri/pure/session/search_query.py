"""What a person types to `seri sessions search`, as an SQLite FTS5 query.

By default the text is taken as written: every word must occur (in any order), a
"quoted phrase" must occur as a phrase, and a word ending in ``*`` matches as a prefix.
Nothing else has a meaning: ``app.py``, ``NEAR``, ``AND``, ``a:b``, ``(`` and an unclosed
quote are searched for as the words they contain, so no text can make the query invalid.
With ``--fts`` the text is FTS5's own query syntax, handed over unchanged; the store then
says whether it is valid.

The index splits text into words at anything that is not a letter or a digit (Unicode
aware, accents folded), so ``parse_config`` is found as the phrase "parse config".
"""

from __future__ import annotations

import re

import attrs

MAX_QUERY_CHARS = 1_000
MAX_TERMS = 64

# A "quoted phrase" (an unclosed quote runs to the end), or a run of non-space characters.
_TERM = re.compile(r'"([^"]*)"?|(\S+)')


class QueryError(ValueError):
    """The text cannot be searched for; the message says why and what to do."""


@attrs.frozen
class SearchQuery:
    """The FTS5 MATCH expression and the terms it was built from (for messages)."""

    match: str
    terms: tuple[str, ...]


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def plain_query(text: str) -> SearchQuery:
    """The words and phrases of ``text``, every one required."""
    _check_size(text)
    parts: list[str] = []
    terms: list[str] = []
    for match in _TERM.finditer(text):
        quoted, bare = match.group(1), match.group(2)
        if quoted is not None:
            words = quoted.strip()
            prefix = False
        else:
            prefix = bare.endswith("*")
            words = bare.rstrip("*")
        if not _has_word(words):
            continue  # punctuation alone is not indexed: it could match nothing
        parts.append(_phrase(words) + (" *" if prefix else ""))
        terms.append(words + ("*" if prefix else ""))
    if not parts:
        raise QueryError(
            f"nothing to search for in {text.strip()[:80]!r}: give a word (letters or digits)"
        )
    if len(parts) > MAX_TERMS:
        raise QueryError(
            f"the search has {len(parts)} words; at most {MAX_TERMS} (quote a long passage "
            "as one phrase)"
        )
    return SearchQuery(" ".join(parts), tuple(terms))


def fts_query(text: str) -> SearchQuery:
    """FTS5 syntax as given (AND, OR, NOT, NEAR(...), "phrases", prefix*)."""
    _check_size(text)
    return SearchQuery(text, (text,))


def _check_size(text: str) -> None:
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the search text is {len(text):,} characters; at most {MAX_QUERY_CHARS:,} "
            "(search for a distinctive part of it)"
        )
    if not text.strip():
        raise QueryError("the search text is empty: give a word to search for")
