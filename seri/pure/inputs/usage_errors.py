"""What is wrong with a command line docopt refused, in one line a person can act on.

docopt says ``Warning: found unmatched (duplicate?) arguments [Option('-v', None, 0, True)]``
or ``--resume requires argument``; this reads the same usage text and says
``unknown option -v``, ``--resume needs a value (ID)``, ``--continue and --resume cannot be
used together``, ``unexpected argument 'foo'`` or which form of the command was meant.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from seri.pure.inputs.lazy_pattern import LazyPattern

_OPTION = LazyPattern(r"(?<![\w-])(--?[A-Za-z][\w-]*)(?:[ =](<[^>]+>|[A-Z][A-Z_]*)\b)?")
_ALTERNATIVES = LazyPattern(r"[\[(]\s*([^\[\]()]*\|[^\[\]()]*)[\])]")
_HELP = frozenset({"-h", "--help", "--version"})


@attrs.frozen
class OptionSpec:
    name: str
    value: str  # the argument's name ("ID"), "" for a flag
    aliases: tuple[str, ...] = ()


def _sections(doc: str) -> tuple[list[str], list[str]]:
    """The usage lines and the option lines of a docopt text."""
    usage: list[str] = []
    options: list[str] = []
    current: list[str] | None = None
    for raw in doc.splitlines():
        line = raw.strip()
        lowered = line.lower()
        if lowered.startswith("usage:"):
            current = usage
            line = line[len("usage:") :].strip()
        elif lowered.startswith("options:"):
            current = options
            continue
        elif not line:
            current = None  # a blank line ends a section
            continue
        if current is usage and line:
            usage.append(line)
        elif current is options and line.startswith("-"):
            options.append(line)
    return usage, options


def option_specs(doc: str) -> dict[str, OptionSpec]:
    """Every option the text names, by each of its spellings."""
    usage, options = _sections(doc)
    specs: dict[str, OptionSpec] = {}
    for line in options:
        described = line.split("  ", 1)[0]  # the part before the description
        found = _OPTION.findall(described)
        names = tuple(name for name, _ in found)
        value = next((v.strip("<>") for _, v in found if v), "")
        for name in names:
            specs[name] = OptionSpec(name, value, names)
    for line in usage:
        for name, value in _OPTION.findall(line):
            specs.setdefault(name, OptionSpec(name, value.strip("<>"), (name,)))
    return specs


def conflicts(doc: str) -> list[tuple[str, ...]]:
    """Groups of options the usage offers as alternatives: ``[--continue | --resume ID]``."""
    usage, _ = _sections(doc)
    groups = []
    for line in usage:
        for inner in _ALTERNATIVES.findall(line):
            names = tuple(
                part.split()[0] for part in inner.split("|") if part.strip().startswith("-")
            )
            if len(names) > 1 and not set(names) & _HELP:
                groups.append(names)
    return groups


def usage_problem(doc: str, argv: Sequence[str], command: str) -> str:
    """One line saying what is wrong with ``argv`` (the words after ``command``)."""
    see = f"see {command} --help"
    specs = option_specs(doc)
    present: list[str] = []
    words: list[str] = []
    index = 0
    while index < len(argv):
        word = argv[index]
        index += 1
        if word == "--":
            words.extend(argv[index:])
            break
        if not word.startswith("-") or word == "-":
            words.append(word)
            continue
        name, has_value, _ = word.partition("=")
        spec = _find(specs, name if name.startswith("--") else name[:2])
        if spec is None:
            return f"unknown option {name}; {see}"
        attached = has_value or (not name.startswith("--") and len(name) > 2)
        if spec.value and not attached:
            if index >= len(argv):
                return f"{spec.name} needs a value ({spec.value}); {see}"
            index += 1
        if not spec.value and has_value:
            return f"{spec.name} takes no value; {see}"
        present.append(spec.aliases[-1] if spec.aliases else spec.name)
    for group in conflicts(doc):
        given = [name for name in group if _canonical(specs, name) in present]
        if len(given) > 1:
            return f"{' and '.join(given)} cannot be used together; {see}"
    repeated = sorted({name for name in present if present.count(name) > 1})
    if repeated and not _repeatable(doc, repeated[0], specs):
        return f"{repeated[0]} is given more than once; {see}"
    return _form_problem(doc, words, present, command, see)


def _find(specs: dict[str, OptionSpec], name: str) -> OptionSpec | None:
    if name in specs:
        return specs[name]
    if name.startswith("--"):
        # docopt accepts a unique prefix of a long option (--cont for --continue).
        matches = {spec.name: spec for key, spec in specs.items() if key.startswith(name)}
        if len(matches) == 1:
            return next(iter(matches.values()))
    return None


def _canonical(specs: dict[str, OptionSpec], name: str) -> str:
    spec = specs.get(name)
    return spec.aliases[-1] if spec and spec.aliases else name


def _repeatable(doc: str, name: str, specs: dict[str, OptionSpec]) -> bool:
    usage, _ = _sections(doc)
    spellings = specs[name].aliases if name in specs else (name,)
    return any(
        re.search(rf"{re.escape(spelling)}(?: [A-Z<][\w<>-]*)?\]?\.\.\.", line)
        for line in usage
        for spelling in spellings
    )


def _form_problem(doc: str, words: list[str], present: list[str], command: str, see: str) -> str:
    """Options are fine: name a word no form takes, a required option left out, or the form
    that was meant."""
    forms = usage_forms(doc, command)
    fitting = [form for form in forms if form.takes(words)]
    if not fitting:
        every = set().union(*(form.known for form in forms))
        stray = next((w for w in words if w not in every), words[-1] if words else "")
        if stray:
            return f"unexpected argument {stray!r}; {see}"
        leads = list(dict.fromkeys(lead for form in forms for lead in sorted(form.lead)))
        return f"{command} needs one of: {', '.join(leads)}; {see}"
    for form in fitting:
        missing = [name for name in form.required if name not in present]
        if missing and len(fitting) == 1:
            spec = option_specs(doc).get(missing[0])
            value = f" {spec.value}" if spec and spec.value else ""
            return f"{missing[0]}{value} is needed: `{form.line}`; {see}"
    shown = " or ".join(f"`{form.line}`" for form in fitting)
    return f"missing or misplaced arguments, expected {shown}; {see}"


def usage_forms(doc: str, command: str) -> list[UsageForm]:
    """The command's usage lines (help aside), each read as a ``UsageForm``."""
    usage, _ = _sections(doc)
    prefix = command.split()
    return [
        UsageForm.of(line, len(prefix))
        for line in usage
        if line.split()[: len(prefix)] == prefix and not set(_option_names(line)) & _HELP
    ]


@attrs.frozen
class UsageForm:
    """One usage line: the word it must start with, the words it knows, its ``<arg>`` slots
    and its required options."""

    line: str
    lead: frozenset[str]
    known: frozenset[str]
    slots: int
    required: tuple[str, ...]

    @classmethod
    def of(cls, line: str, skip: int) -> UsageForm:
        rest = " ".join(line.split()[skip:])
        words = re.findall(r"[\w<>.-]+", rest)
        known = frozenset(w for w in words if re.fullmatch(r"[a-z][a-z-]*", w))
        slots = sum(1 for w in words if w.startswith("<"))
        if "<" in rest and "..." in rest:
            slots = len(words) + 99  # <args>... takes any number
        lead: frozenset[str] = frozenset()
        first = rest.split(" ", 1)[0] if rest else ""
        if re.fullmatch(r"[a-z][a-z-]*", first):
            lead = frozenset({first})
        elif first.startswith("("):
            inner = rest[1 : rest.find(")")]
            lead = frozenset(part.strip() for part in inner.split("|"))
        return cls(line, lead, known, slots, tuple(_top_level_options(rest)))

    def takes(self, words: list[str]) -> bool:
        if self.lead and (not words or words[0] not in self.lead):
            return False
        extra = [w for w in words[1 if self.lead else 0 :] if w not in self.known]
        return len(extra) <= self.slots


def _top_level_options(text: str) -> list[str]:
    """Options outside any brackets: the ones a form requires."""
    depth = 0
    flat = []
    for char in text:
        if char in "[(":
            depth += 1
        elif char in "])":
            depth -= 1
        elif depth == 0:
            flat.append(char)
            continue
        flat.append(" ")
    return _option_names("".join(flat))


def _option_names(line: str) -> list[str]:
    return [name for name, _ in _OPTION.findall(line)]
