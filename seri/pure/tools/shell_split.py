"""Split a shell command into the simple commands it would run.

Permission rules are matched per simple command ("segment"), so ``ls && rm x``
cannot slip ``rm`` past a ``deny: bash(rm *)`` rule by hiding behind ``ls``.
The splitter follows bash's quoting and word rules closely enough to find every
place a command can start: after ``&&``, ``||``, ``;``, ``|``, ``&`` and
newlines, inside ``( )`` and ``{ }``, ``$( )``, backticks, ``<( )`` and
``>( )``, in the script of ``bash -c`` / ``sh -c`` / ``eval``, behind wrappers
such as ``env``, ``sudo``, ``timeout`` and ``xargs``, and in ``find -exec``.

It does not try to be a shell. When it meets something it cannot analyse
soundly (``case``, a command name computed at run time, command substitution
inside a here-document) it says so in ``Parsed.error``, and the caller must
then treat the command as unknown, never as harmless.

The lexing is ``shell_lexer``'s; what particular commands do (wrap another, write a file)
is ``shell_commands``'s; this module turns the lexed words into segments.
"""

from __future__ import annotations

import re

import attrs

from seri.pure.tools.shell_commands import (
    ASSIGNMENT,
    SHELLS,
    OpaqueError,
    basename,
    git_without_global_options,
    unwrap,
    written_arguments,
)
from seri.pure.tools.shell_lexer import RawSegment, UnparseableError, Word, lex

MAX_COMMAND_CHARS = 100_000

# Words that open or close compound commands; the command proper follows them.
_RESERVED = frozenset(
    {
        "{",
        "}",
        "!",
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "time",
        "coproc",
    }
)
# Segments that run nothing themselves (their bodies are separate segments).
_HEADERS = frozenset({"for", "select", "function"})


@attrs.frozen
class Segment:
    """One simple command: its words after quote removal, and the files it writes.

    ``words`` are normalised to the command that really runs: leading
    assignments and wrappers (``env``, ``sudo``, ``timeout``, ``xargs``) are
    gone and git's global options (``-C dir``, ``-c k=v``) are dropped.
    ``written`` are the words as written (only reserved words such as ``if``
    removed). ``writes`` are targets of ``>``, ``>>``, ``&>``, ``tee`` and the
    like. ``computed_writes`` are write targets whose text depends on run-time
    expansion (``> "$f"``, ``> *.log``), so no path check can be trusted.
    ``opaque`` says why what this segment runs cannot be known (``$CMD x``,
    ``bash -c "$s"``); such a segment is never harmless.
    """

    words: tuple[str, ...]
    writes: tuple[str, ...] = ()
    computed_writes: tuple[str, ...] = ()
    opaque: str = ""
    written: tuple[str, ...] | None = None  # None: the same as words

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def written_text(self) -> str:
        return " ".join(self.words if self.written is None else self.written)

    @property
    def texts(self) -> tuple[str, ...]:
        """Every form a deny or ask rule is matched against.

        The command that runs, the command as written, and both with a bare
        command name (``/bin/rm`` → ``rm``): ``sudo rm x`` is caught by a rule
        on ``rm *`` and by one on ``sudo *``, and a path cannot dodge either.
        Allow rules match ``written_text`` only, so neither ``/tmp/x/git`` nor
        ``GIT_SSH_COMMAND=evil git push`` passes for plain ``git``.
        """
        forms: list[str] = []
        for words in (self.words, self.written or ()):
            if not words:
                continue
            forms.append(" ".join(words))
            if "/" in words[0]:
                forms.append(" ".join((basename(words[0]), *words[1:])))
        return tuple(dict.fromkeys(forms)) or ("",)


@attrs.frozen
class Parsed:
    """The segments of a command, or why it could not be analysed (``error``)."""

    segments: tuple[Segment, ...]
    error: str = ""


def split_command(command: str) -> Parsed:
    """Split ``command`` into normalised segments, or explain why it cannot be."""
    if len(command) > MAX_COMMAND_CHARS:
        return Parsed((), f"the command is longer than {MAX_COMMAND_CHARS} characters")
    try:
        return Parsed(tuple(_segments_of(command, depth=0)))
    except UnparseableError as exc:
        return Parsed((), str(exc))


def _segments_of(source: str, *, depth: int) -> list[Segment]:
    out: list[Segment] = []
    for raw, at in lex(source, depth=depth):
        out.extend(_normalise(raw, depth=at))
    return out


# -- normalisation --------------------------------------------------------


def _normalise(raw: RawSegment, *, depth: int) -> list[Segment]:
    """Turn a lexed segment into rule-matchable segments (one, or several for sh -c)."""
    words = list(raw.words)
    known = [w for w in raw.writes if not w.computed or _home_relative(w.text)]
    writes = tuple(w.text for w in known)
    computed_writes = tuple(w.text for w in raw.writes if w not in known)

    while words and not words[0].quoted and words[0].text in _RESERVED:
        words.pop(0)
    if words and not words[0].quoted and words[0].text in _HEADERS:
        return [Segment((), writes, computed_writes)] if writes or computed_writes else []
    written = tuple(w.text for w in words)
    while words and not words[0].quoted and ASSIGNMENT.match(words[0].text):
        words.pop(0)

    extra: list[Segment] = []
    opaque = ""
    try:
        words, extra = _command_proper(words, depth=depth)
    except OpaqueError as exc:
        opaque = str(exc)

    texts = tuple(w.text for w in words)
    writes += written_arguments(texts)
    if not texts and not writes and not computed_writes:
        return extra
    kept_written = written if written != texts else None
    return [Segment(texts, writes, computed_writes, opaque, kept_written), *extra]


def _command_proper(words: list[Word], *, depth: int) -> tuple[list[Word], list[Segment]]:
    """The words minus wrappers, and the commands this one runs in turn (``sh -c``)."""
    words = unwrap(words)
    if not words:
        return words, []
    if words[0].computed:
        raise OpaqueError(f"the command name {words[0].text!r} is computed at run time")
    name = basename(words[0].text)
    if name in SHELLS:
        return words, _shell_script(words, depth=depth)
    if name == "eval":
        return words, _eval(words, depth=depth)
    if name == "find":
        return words, _find_exec(words, depth=depth)
    if name == "git":
        return git_without_global_options(words), []
    return words, []


def _shell_script(words: list[Word], *, depth: int) -> list[Segment]:
    """The segments of ``bash -c SCRIPT`` (none if there is no ``-c``)."""
    has_c = False
    i = 1
    while i < len(words):
        text = words[i].text
        if text in {"-o", "+o", "-O", "+O", "--rcfile", "--init-file"}:
            i += 2
            continue
        if text == "--":
            i += 1
            break
        if text.startswith(("-", "+")) and len(text) > 1 and not text.startswith("--"):
            has_c = has_c or "c" in text[1:]
            i += 1
            continue
        if text.startswith("--"):
            i += 1
            continue
        break
    if not has_c:
        return []
    if i >= len(words):
        raise OpaqueError(f"{words[0].text} -c has no script")
    if words[i].computed:
        raise OpaqueError(f"the script of {words[0].text} -c is computed at run time")
    return _segments_of(words[i].text, depth=depth + 1)


def _eval(words: list[Word], *, depth: int) -> list[Segment]:
    if any(w.computed for w in words[1:]):
        raise OpaqueError("the arguments of eval are computed at run time")
    return _segments_of(" ".join(w.text for w in words[1:]), depth=depth + 1)


def _find_exec(words: list[Word], *, depth: int) -> list[Segment]:
    """Commands that ``find -exec ... ;`` runs, as segments of their own."""
    out: list[Segment] = []
    i = 1
    while i < len(words):
        if words[i].text in {"-exec", "-execdir", "-ok", "-okdir"}:
            j = i + 1
            while j < len(words) and words[j].text not in {";", "+"}:
                j += 1
            if j > i + 1:
                out.extend(_normalise(RawSegment(words[i + 1 : j]), depth=depth + 1))
            i = j
        i += 1
    return out


def _home_relative(text: str) -> bool:
    """``$HOME/x`` and ``${HOME}/x`` are computed, yet their target is known."""
    return re.fullmatch(r"(\$HOME|\$\{HOME\})(/[^$`*?\[]*)?", text) is not None
