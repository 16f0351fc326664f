"""Run tags: KEY=VALUE labels that a fleet (CI, an evaluation harness) puts on its runs, so
that its sessions, recordings and exported spans can be grouped by them afterwards.

They come from ``SERI_RUN_TAGS`` (``KEY=VALUE,KEY=VALUE``) and from each ``--tag KEY=VALUE``;
a ``--tag`` wins over the variable for the same key. A key is a name a query can use as it
is (a letter, then letters, digits, ``_``, ``.`` or ``-``), because it becomes part of an
attribute name (``seri.tag.KEY``) in OpenTelemetry; a value is one line of printable text.
Anything else is refused with the tag and the fix named, before the run starts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping

from seri.pure.inputs.errors import SeriError

TAGS_VARIABLE = "SERI_RUN_TAGS"
# The span attribute prefix of a tag (see genai_trace): vendor-namespaced, as the
# OpenTelemetry naming rules ask of attributes no convention defines.
ATTRIBUTE_PREFIX = "seri.tag."
MAX_TAGS = 32
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 256

# Unicode categories a one-line label never holds: controls, formats, surrogates, private use,
# unassigned, line and paragraph separators.
_NOT_IN_A_LINE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*\Z")

# A run's tags, sorted by key: one value per key.
RunTags = tuple[tuple[str, str], ...]

_EXAMPLE = "e.g. --tag experiment=baseline or SERI_RUN_TAGS=experiment=baseline,shard=3"


class BadTag(SeriError):
    """A tag that cannot be used: named, with where it came from and the fix (exit 2)."""


def parse_tag(text: str, source: str) -> tuple[str, str]:
    """One ``KEY=VALUE`` (spaces around either are dropped); ``source`` names where it came
    from for the error message (``--tag`` or the variable)."""
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    shown = repr(text if len(text) <= 80 else text[:77] + "...")
    if not sep or not key:
        raise BadTag(f"bad run tag {shown} in {source}: a tag is KEY=VALUE ({_EXAMPLE})")
    if len(key) > MAX_KEY_CHARS or not _KEY.match(key):
        raise BadTag(
            f"bad run tag {shown} in {source}: the key must start with a letter and hold only "
            f"letters, digits, '_', '.' or '-' (at most {MAX_KEY_CHARS} characters)"
        )
    if not value:
        raise BadTag(f"bad run tag {shown} in {source}: {key} has no value; give KEY=VALUE")
    if len(value) > MAX_VALUE_CHARS or not _one_printable_line(value):
        raise BadTag(
            f"bad run tag {shown} in {source}: the value must be one line of printable text "
            f"of at most {MAX_VALUE_CHARS} characters"
        )
    return key, value


def _one_printable_line(value: str) -> bool:
    """No control or format characters (escape sequences, bidi overrides), no line breaks;
    spaces of any kind are fine."""
    return not any(unicodedata.category(ch) in _NOT_IN_A_LINE for ch in value)


def run_tags(variable: str, flags: Iterable[str]) -> RunTags:
    """The run's tags: those of ``SERI_RUN_TAGS`` (its value ``variable``), then each
    ``--tag`` of ``flags`` over them. Empty items of the variable (``a=1,,b=2``, a trailing
    comma) are skipped."""
    tags: dict[str, str] = {}
    for item in variable.split(","):
        if item.strip():
            key, value = parse_tag(item, TAGS_VARIABLE)
            tags[key] = value
    for flag in flags:
        key, value = parse_tag(flag, "--tag")
        tags[key] = value
    if len(tags) > MAX_TAGS:
        raise BadTag(
            f"{len(tags)} run tags given (SERI_RUN_TAGS and --tag); at most {MAX_TAGS} are kept "
            "per run: drop some"
        )
    return tuple(sorted(tags.items()))


def tags_from_header(value: object) -> RunTags:
    """The tags a recorded header holds (``{"KEY": "VALUE"}``), as far as they are well
    formed: a stored recording is read as it is, never refused for its tags."""
    if not isinstance(value, Mapping):
        return ()
    found = {
        key: item
        for key, item in value.items()
        if isinstance(key, str)
        and isinstance(item, str)
        and len(key) <= MAX_KEY_CHARS
        and _KEY.match(key)
    }
    return tuple(sorted(found.items())[:MAX_TAGS])


def tag_attributes(tags: RunTags) -> tuple[tuple[str, str], ...]:
    """The tags as span attributes: ``seri.tag.KEY`` = VALUE."""
    return tuple((ATTRIBUTE_PREFIX + key, value) for key, value in tags)
