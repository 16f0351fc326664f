"""A ``SKILL.md``'s front matter, read and judged as the Agent Skills specification says.

The front matter is YAML between two ``---`` lines. Skills in the wild use a small part of
YAML: ``key: value`` lines (plain, single- or double-quoted), block scalars (``|`` and
``>``), a plain value continued on indented lines, and one nested mapping (``metadata:``).
That part is read here, leniently as the client integration guide asks: a value holding
``: `` (which strict YAML refuses unquoted) is taken whole, as its writer meant. Every value
is text, as the reference validator (``skills-ref``, on strictyaml) reads them.

``problems`` applies the specification's rules as ``skills-ref validate`` does: the allowed
fields, ``name`` (at most 64 lowercase letters, digits and hyphens, no hyphen at either end
nor two in a row, the same as its directory's name), ``description`` (1 to 1,024
characters) and ``compatibility`` (at most 500).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
ALLOWED_FIELDS = frozenset(
    ("name", "description", "license", "allowed-tools", "metadata", "compatibility")
)

Value = str | dict[str, str]
Fields = dict[str, Value]


class FrontMatterError(ValueError):
    """A SKILL.md whose front matter cannot be read at all (the message says why)."""


def split_front_matter(text: str) -> tuple[str, str]:
    """The front matter's text and the body after it."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        raise FrontMatterError("SKILL.md must start with YAML front matter (a --- line)")
    parts = text.split("---", 2)
    if len(parts) < 3:
        raise FrontMatterError("SKILL.md's front matter is not closed with a --- line")
    return parts[1], parts[2].strip()


def parse_front_matter(text: str) -> tuple[Fields, str]:
    """The fields of a SKILL.md and its Markdown body."""
    head, body = split_front_matter(text)
    return read_fields(head), body


def read_fields(head: str) -> Fields:
    lines = head.split("\n")
    fields: Fields = {}
    index = 0
    while index < len(lines):
        line = lines[index].rstrip()
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontMatterError(f"front matter line {index} is indented under nothing")
        key, colon, rest = line.partition(":")
        if not colon or not key.strip():
            raise FrontMatterError(f"front matter line {index} is not 'key: value'")
        key, rest = key.strip(), rest.strip()
        block, index = _indented(lines, index)
        if rest in ("", "|", ">", "|-", ">-", "|+", ">+"):
            if rest == "" and block and _is_mapping(block):
                fields[key] = _mapping(block)
            else:
                fields[key] = _block_scalar(rest, block)
        else:
            fields[key] = _scalar(" ".join([rest, *(b.strip() for b in block)]).strip())
    return fields


def _indented(lines: list[str], index: int) -> tuple[list[str], int]:
    """The lines under a key (indented, or blank between indented ones)."""
    block: list[str] = []
    while index < len(lines) and (not lines[index].strip() or lines[index][0] in " \t"):
        block.append(lines[index].rstrip())
        index += 1
    while block and not block[-1].strip():
        block.pop()
    return block, index


def _is_mapping(block: list[str]) -> bool:
    first = next(line for line in block if line.strip())
    key, colon, _ = first.strip().partition(":")
    return bool(colon) and bool(key) and not key.startswith(("-", '"', "'"))


def _mapping(block: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in block:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, colon, rest = line.strip().partition(":")
        if not colon:
            raise FrontMatterError(f"front matter line {line.strip()!r} is not 'key: value'")
        found[_scalar(key.strip())] = _scalar(rest.strip())
    return found


def _block_scalar(style: str, block: list[str]) -> str:
    texts = [line.strip() for line in block]
    if style.startswith("|"):
        widths = [len(line) - len(line.lstrip()) for line in block if line.strip()]
        cut = min(widths, default=0)
        text = "\n".join(line[cut:] for line in block)
    elif style.startswith(">"):
        text = "\n".join(" ".join(part.split("\n")) for part in "\n".join(texts).split("\n\n"))
    else:
        text = " ".join(t for t in texts if t)
    if style.endswith("-"):
        return text.rstrip("\n")
    return text + "\n" if style else text


def _scalar(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        inner = raw[1:-1]
        return inner.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")
    if len(raw) >= 2 and raw[0] == raw[-1] == "'":
        return raw[1:-1].replace("''", "'")
    return raw.split(" #", 1)[0].rstrip() if " #" in raw else raw


def problems(fields: Mapping[str, Value], directory_name: str) -> tuple[str, ...]:
    """What the specification's rules find wrong (empty: a valid skill)."""
    found: list[str] = []
    extra = sorted(set(fields) - ALLOWED_FIELDS)
    if extra:
        found.append(
            f"unexpected front matter field(s) {', '.join(extra)}; the specification allows "
            f"{', '.join(sorted(ALLOWED_FIELDS))}"
        )
    found.extend(_name_problems(fields.get("name"), directory_name))
    description = fields.get("description")
    if not isinstance(description, str) or not description.strip():
        found.append("'description' is missing or empty: it says what the skill is for")
    elif len(description) > MAX_DESCRIPTION_CHARS:
        found.append(
            f"'description' has {len(description):,} characters, more than "
            f"{MAX_DESCRIPTION_CHARS:,}"
        )
    compatibility = fields.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY_CHARS
    ):
        found.append(f"'compatibility' must be text of at most {MAX_COMPATIBILITY_CHARS}")
    return tuple(found)


def _name_problems(raw: Value | None, directory_name: str) -> list[str]:
    if not isinstance(raw, str) or not raw.strip():
        return ["'name' is missing or empty"]
    name = unicodedata.normalize("NFKC", raw.strip())
    found = []
    if len(name) > MAX_NAME_CHARS:
        found.append(f"'name' has {len(name)} characters, more than {MAX_NAME_CHARS}")
    if name != name.lower():
        found.append(f"'name' {name!r} must be lowercase")
    if name.startswith("-") or name.endswith("-"):
        found.append(f"'name' {name!r} may not start or end with a hyphen")
    if "--" in name:
        found.append(f"'name' {name!r} may not hold two hyphens in a row")
    if not all(c.isalnum() or c == "-" for c in name):
        found.append(f"'name' {name!r} may hold only letters, digits and hyphens")
    if unicodedata.normalize("NFKC", directory_name) != name:
        found.append(f"'name' {name!r} differs from its directory's name {directory_name!r}")
    return found
