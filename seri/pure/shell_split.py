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
"""

from __future__ import annotations

import re

import attrs

MAX_DEPTH = 8
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
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "ash", "mksh", "busybox"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_FD_PREFIX = re.compile(r"[0-9]+")

# Wrappers that run their arguments as a command, with the options (by name)
# that take a separate value, so the value is not mistaken for the command.
_WRAPPERS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "sudo": frozenset(
        {
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-r",
            "--role",
            "-t",
            "--type",
            "-U",
            "--other-user",
            "-D",
            "--chdir",
            "-T",
            "--command-timeout",
        }
    ),
    "doas": frozenset({"-u", "-C"}),
    "setsid": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "xargs": frozenset(
        {
            "-I",
            "-i",
            "-n",
            "-P",
            "-d",
            "-L",
            "-l",
            "-s",
            "-E",
            "-e",
            "-a",
            "--max-args",
            "--max-procs",
            "--delimiter",
            "--max-lines",
            "--max-chars",
            "--arg-file",
            "--replace",
            "--eof",
        }
    ),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
}
# Wrappers whose first plain argument is not the command but a value (a duration).
_WRAPPERS_WITH_LEADING_VALUE = frozenset({"timeout"})

# git's global options (before the subcommand) that take a separate value.
_GIT_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--config-env",
        "--exec-path",
        "--super-prefix",
    }
)

# Commands whose file arguments they write, for the protected-path check.
_LAST_ARG_WRITERS = frozenset({"cp", "mv", "ln", "install", "rsync"})
# Commands that create, change, or remove every file they are given.
_ALL_ARGS_WRITERS = frozenset({"touch", "truncate", "rm", "rmdir", "unlink", "shred", "mkdir"})
# ... after a first operand that is not a file (a mode, an owner).
_AFTER_FIRST_WRITERS = frozenset({"chmod", "chown", "chgrp"})
# Editors in place: with -i they rewrite the files after their script.
_IN_PLACE_EDITORS = frozenset({"sed", "perl"})


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
                forms.append(" ".join((_basename(words[0]), *words[1:])))
        return tuple(dict.fromkeys(forms)) or ("",)


@attrs.frozen
class Parsed:
    """The segments of a command, or why it could not be analysed (``error``)."""

    segments: tuple[Segment, ...]
    error: str = ""


class _UnparseableError(Exception):
    """The command as a whole cannot be split (an unclosed quote, ``case``)."""


class _OpaqueError(Exception):
    """One segment runs something that cannot be known before it runs."""


@attrs.define
class _Word:
    text: str = ""
    started: bool = False  # distinguishes "" (an empty word) from no word
    quoted: bool = False
    computed: bool = False  # contains $-expansion, substitution or an unquoted glob


@attrs.define
class _Raw:
    """A segment as lexed: words with their flags, and redirect targets."""

    words: list[_Word] = attrs.Factory(list)
    writes: list[_Word] = attrs.Factory(list)


def split_command(command: str) -> Parsed:
    """Split ``command`` into normalised segments, or explain why it cannot be."""
    if len(command) > MAX_COMMAND_CHARS:
        return Parsed((), f"the command is longer than {MAX_COMMAND_CHARS} characters")
    try:
        return Parsed(tuple(_segments_of(command, depth=0)))
    except _UnparseableError as exc:
        return Parsed((), str(exc))


def _segments_of(source: str, *, depth: int) -> list[Segment]:
    if depth > MAX_DEPTH:
        raise _UnparseableError(f"commands are nested more than {MAX_DEPTH} levels deep")
    lexer = _Lexer(source, depth)
    lexer.parse_list(terminator=None)
    out: list[Segment] = list(lexer.nested)
    for raw in lexer.raws:
        out.extend(_normalise(raw, depth=depth))
    return out


class _Lexer:
    """A single pass over the source, building raw segments.

    Nested commands found on the way (``$(...)``, backticks) are split by a
    recursive call and collected in ``nested``; the word that held them keeps
    their source text and is marked computed.
    """

    def __init__(self, src: str, depth: int) -> None:
        self.src = src
        self.pos = 0
        self.depth = depth
        self.raws: list[_Raw] = []
        self.nested: list[Segment] = []
        self._heredocs: list[tuple[str, bool, bool]] = []  # delimiter, quoted, strip tabs

    # -- the command list -------------------------------------------------

    def parse_list(self, terminator: str | None) -> None:
        """Lex until the end of the source, or an unmatched ``)`` if terminator."""
        seg = _Raw()
        word = _Word()
        pending: str | None = None  # redirect kind awaiting its target word
        parens = 0
        src = self.src

        def end_word() -> None:
            nonlocal word, pending
            if not word.started:
                return
            if pending is None and not seg.words and not word.quoted and word.text == "case":
                raise _UnparseableError("case statements are not analysed")
            if pending is None:
                seg.words.append(word)
            elif pending == "write":
                seg.writes.append(word)
            elif pending == "heredoc":
                self._heredocs.append((word.text, word.quoted, False))
            elif pending == "heredoc-strip":
                self._heredocs.append((word.text, word.quoted, True))
            pending = None
            word = _Word()

        def end_segment() -> None:
            nonlocal seg
            end_word()
            if pending is not None:
                raise _UnparseableError("a redirection has no target")
            if seg.words or seg.writes:
                self.raws.append(seg)
            seg = _Raw()

        while self.pos < len(src):
            c = src[self.pos]
            nxt = src[self.pos + 1] if self.pos + 1 < len(src) else ""
            if c in " \t":
                end_word()
                self.pos += 1
            elif c == "\\":
                if nxt == "\n":  # line continuation
                    self.pos += 2
                    continue
                if not nxt:
                    raise _UnparseableError("the command ends with a lone backslash")
                word.text += nxt
                word.started = word.quoted = True
                self.pos += 2
            elif c == "'":
                self._single_quoted(word)
            elif c == '"':
                self._double_quoted(word)
            elif c == "`":
                self._backticks(word)
            elif c == "$":
                self._dollar(word)
            elif c == "#" and not word.started:
                end = src.find("\n", self.pos)
                self.pos = len(src) if end < 0 else end
            elif c == "\n":
                end_segment()
                self.pos += 1
                self._read_heredocs()
            elif c in ";&|":
                op = self._operator()
                if op in {"&>", "&>>"}:
                    end_word()
                    if pending is not None:
                        raise _UnparseableError("a redirection has no target")
                    pending = "write"
                    continue
                end_segment()
            elif c == "(":
                end_segment()
                parens += 1
                self.pos += 1
            elif c == ")":
                if parens == 0:
                    if terminator == ")":
                        end_segment()
                        self.pos += 1
                        return
                    raise _UnparseableError("a ')' has no matching '('")
                end_segment()
                parens -= 1
                self.pos += 1
            elif c in "<>":
                if nxt == "(":  # process substitution <(...) or >(...)
                    self.pos += 2
                    self._nested_until_paren(word)
                    continue
                if word.started and not word.quoted and _FD_PREFIX.fullmatch(word.text):
                    word = _Word()  # "2>": the digits name a file descriptor
                else:
                    end_word()
                if pending is not None:
                    raise _UnparseableError("a redirection has no target")
                pending = self._redirect()
            else:
                if c in "*?[{":  # globs and brace expansion change the words at run time
                    word.computed = True
                word.text += c
                word.started = True
                self.pos += 1
        if terminator == ")":
            raise _UnparseableError("a '$(' or '(' is never closed")
        if parens:
            raise _UnparseableError("a '(' is never closed")
        end_segment()
        if self._heredocs:
            self._heredocs.clear()  # a here-document cut off by the end: bash accepts it

    def _operator(self) -> str:
        """Consume a control operator at ``pos`` and return it."""
        for op in ("&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", "|", ";", "&"):
            if self.src.startswith(op, self.pos):
                if op in {";;", ";;&", ";&"}:
                    raise _UnparseableError("case statements are not analysed")
                self.pos += len(op)
                return op
        raise AssertionError("unreachable: called on a non-operator")

    def _redirect(self) -> str | None:
        """Consume a redirection operator; say what its target word is."""
        src = self.src
        for op in ("<<<", "<<-", "<<", "<>", "<&", ">>", ">|", ">&", "<", ">"):
            if src.startswith(op, self.pos):
                self.pos += len(op)
                break
        if op == "<<-":
            return "heredoc-strip"
        if op == "<<":
            return "heredoc"
        if op in {">&", "<&"}:
            target = re.match(r"\s*([0-9]+-?|-)(?=[\s;&|)<>]|$)", src[self.pos :])
            if target:  # duplicating a descriptor, not naming a file
                self.pos += target.end()
                return None
            return "write" if op == ">&" else "read"
        return "write" if op in {">>", ">|", ">", "<>"} else "read"

    # -- quoting and expansions ------------------------------------------

    def _single_quoted(self, word: _Word) -> None:
        end = self.src.find("'", self.pos + 1)
        if end < 0:
            raise _UnparseableError("a single quote is never closed")
        word.text += self.src[self.pos + 1 : end]
        word.started = word.quoted = True
        self.pos = end + 1

    def _double_quoted(self, word: _Word) -> None:
        src = self.src
        self.pos += 1
        word.started = word.quoted = True
        while self.pos < len(src):
            c = src[self.pos]
            if c == '"':
                self.pos += 1
                return
            if c == "\\" and self.pos + 1 < len(src):
                nxt = src[self.pos + 1]
                if nxt == "\n":
                    pass
                elif nxt in '$`"\\':
                    word.text += nxt
                else:
                    word.text += c + nxt
                self.pos += 2
            elif c == "`":
                self._backticks(word)
            elif c == "$":
                self._dollar(word)
            else:
                word.text += c
                self.pos += 1
        raise _UnparseableError("a double quote is never closed")

    def _dollar(self, word: _Word) -> None:
        src = self.src
        start = self.pos
        nxt = src[self.pos + 1] if self.pos + 1 < len(src) else ""
        word.started = True
        if src.startswith("$((", self.pos):
            end = _matching_double_paren(src, self.pos + 3)
            inner = src[self.pos + 3 : end]
            if "$(" in inner or "`" in inner:
                raise _UnparseableError("command substitution inside $((...)) is not analysed")
            self.pos = end + 2
        elif nxt == "(":
            self.pos += 2
            self._nested_until_paren(word)
            return
        elif nxt == "{":
            end = src.find("}", self.pos)
            if end < 0:
                raise _UnparseableError("a '${' is never closed")
            inner = src[self.pos + 2 : end]
            if "$" in inner or "`" in inner or "{" in inner:
                raise _UnparseableError("nested expansions inside ${...} are not analysed")
            self.pos = end + 1
        elif nxt == "'":  # $'...' ANSI-C quoting
            end = src.find("'", self.pos + 2)
            if end < 0:
                raise _UnparseableError("a $'...' quote is never closed")
            body = src[self.pos + 2 : end]
            if "\\" in body:
                raise _UnparseableError("escapes inside $'...' are not analysed")
            word.text += body
            word.quoted = True
            self.pos = end + 1
            return
        else:
            m = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])?", src[self.pos :])
            assert m is not None
            self.pos += m.end()
            if m.group(1) is None:  # a lone "$" is literal
                word.text += "$"
                return
        word.text += src[start : self.pos]
        word.computed = True

    def _nested_until_paren(self, word: _Word) -> None:
        """Split a ``$( ... )``-like body starting at ``pos``; ``pos`` ends after ``)``."""
        start = self.pos - 2
        inner = _Lexer(self.src, self.depth + 1)
        if inner.depth > MAX_DEPTH:
            raise _UnparseableError(f"commands are nested more than {MAX_DEPTH} levels deep")
        inner.pos = self.pos
        inner.parse_list(terminator=")")
        self.nested.extend(inner.nested)
        for raw in inner.raws:
            self.nested.extend(_normalise(raw, depth=self.depth + 1))
        self.pos = inner.pos
        word.text += self.src[start : self.pos]
        word.started = word.computed = True

    def _backticks(self, word: _Word) -> None:
        src = self.src
        i = self.pos + 1
        body: list[str] = []
        while i < len(src) and src[i] != "`":
            if src[i] == "\\" and i + 1 < len(src) and src[i + 1] in "`$\\":
                body.append(src[i + 1])
                i += 2
                continue
            body.append(src[i])
            i += 1
        if i >= len(src):
            raise _UnparseableError("a backtick is never closed")
        self.nested.extend(_segments_of("".join(body), depth=self.depth + 1))
        word.text += src[self.pos : i + 1]
        word.started = word.computed = True
        self.pos = i + 1

    def _read_heredocs(self) -> None:
        """Skip the bodies of here-documents opened on the line just ended."""
        for delimiter, quoted, strip_tabs in self._heredocs:
            body_start = self.pos
            while self.pos < len(self.src):
                end = self.src.find("\n", self.pos)
                line_end = len(self.src) if end < 0 else end
                line = self.src[self.pos : line_end]
                self.pos = line_end + 1 if end >= 0 else line_end
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    body = self.src[body_start : self.pos]
                    break
            else:
                body = self.src[body_start:]
            if not quoted and ("$(" in body or "`" in body):
                raise _UnparseableError(
                    "command substitution inside a here-document is not analysed"
                )
        self._heredocs.clear()


def _matching_double_paren(src: str, start: int) -> int:
    """Index of the ``))`` closing a ``$((`` whose body starts at ``start``."""
    depth = 0
    i = start
    while i < len(src):
        if src[i] == "(":
            depth += 1
        elif src[i] == ")":
            if depth == 0:
                if src.startswith("))", i):
                    return i
                raise _UnparseableError("a '$((' is not closed by '))'")
            depth -= 1
        i += 1
    raise _UnparseableError("a '$((' is never closed")


# -- normalisation --------------------------------------------------------


def _normalise(raw: _Raw, *, depth: int) -> list[Segment]:
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
    while words and not words[0].quoted and _ASSIGNMENT.match(words[0].text):
        words.pop(0)

    extra: list[Segment] = []
    opaque = ""
    try:
        words, extra = _command_proper(words, depth=depth)
    except _OpaqueError as exc:
        opaque = str(exc)

    texts = tuple(w.text for w in words)
    writes += _written_arguments(texts)
    if not texts and not writes and not computed_writes:
        return extra
    kept_written = written if written != texts else None
    return [Segment(texts, writes, computed_writes, opaque, kept_written), *extra]


def _command_proper(words: list[_Word], *, depth: int) -> tuple[list[_Word], list[Segment]]:
    """The words minus wrappers, and the commands this one runs in turn (``sh -c``)."""
    words = _unwrap(words)
    if not words:
        return words, []
    if words[0].computed:
        raise _OpaqueError(f"the command name {words[0].text!r} is computed at run time")
    name = _basename(words[0].text)
    if name in _SHELLS:
        return words, _shell_script(words, depth=depth)
    if name == "eval":
        return words, _eval(words, depth=depth)
    if name == "find":
        return words, _find_exec(words, depth=depth)
    if name == "git":
        return _git_without_global_options(words), []
    return words, []


def _unwrap(words: list[_Word]) -> list[_Word]:
    """Drop wrappers (``env X=1``, ``sudo -u u``, ``timeout 5``, ``xargs -n1``).

    A wrapper with nothing to wrap (``env``, ``xargs``) is itself the command.
    """
    original = words
    while words and not words[0].computed:
        name = _basename(words[0].text)
        if name not in _WRAPPERS:
            return words
        if name == "command" and any(w.text in {"-v", "-V"} for w in words[1:2]):
            return words  # "command -v x" looks x up; it does not run it
        value_options = _WRAPPERS[name]
        i = 1
        while i < len(words):
            text = words[i].text
            if text == "--":
                i += 1
                break
            if name == "env" and text.startswith(("-S", "--split-string")):
                raise _OpaqueError("env -S is not analysed")
            if text.startswith("-") and len(text) > 1:
                i += 2 if text in value_options else 1
            elif name == "env" and _ASSIGNMENT.match(text):
                i += 1
            else:
                break
        if name in _WRAPPERS_WITH_LEADING_VALUE and i < len(words):
            i += 1
        words = words[i:]
        while words and not words[0].quoted and _ASSIGNMENT.match(words[0].text):
            words.pop(0)
    return words or original


def _shell_script(words: list[_Word], *, depth: int) -> list[Segment]:
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
        raise _OpaqueError(f"{words[0].text} -c has no script")
    if words[i].computed:
        raise _OpaqueError(f"the script of {words[0].text} -c is computed at run time")
    return _segments_of(words[i].text, depth=depth + 1)


def _eval(words: list[_Word], *, depth: int) -> list[Segment]:
    if any(w.computed for w in words[1:]):
        raise _OpaqueError("the arguments of eval are computed at run time")
    return _segments_of(" ".join(w.text for w in words[1:]), depth=depth + 1)


def _find_exec(words: list[_Word], *, depth: int) -> list[Segment]:
    """Commands that ``find -exec ... ;`` runs, as segments of their own."""
    out: list[Segment] = []
    i = 1
    while i < len(words):
        if words[i].text in {"-exec", "-execdir", "-ok", "-okdir"}:
            j = i + 1
            while j < len(words) and words[j].text not in {";", "+"}:
                j += 1
            if j > i + 1:
                out.extend(_normalise(_Raw(words[i + 1 : j]), depth=depth + 1))
            i = j
        i += 1
    return out


def _git_without_global_options(words: list[_Word]) -> list[_Word]:
    """``git -C . -c k=v push`` becomes ``git push``, so rules see the subcommand."""
    i = 1
    while i < len(words) and words[i].text.startswith("-"):
        text = words[i].text
        if text in {"-c", "--config-env"} and i + 1 < len(words):
            _refuse_git_alias(words[i + 1].text)
        if text.startswith("-c") and len(text) > 2:
            _refuse_git_alias(text[2:])
        i += 2 if text in _GIT_VALUE_OPTIONS else 1
    return [words[0], *words[i:]]


def _refuse_git_alias(setting: str) -> None:
    # "git -c alias.x='!rm y' x" runs a shell command no rule can see.
    if setting.lower().startswith("alias.") and "=!" in setting:
        raise _OpaqueError("a git alias defined on the command line runs a shell command")


def _written_arguments(words: tuple[str, ...]) -> tuple[str, ...]:
    """Files a well-known writer is told to write: ``tee F``, ``cp A F``, ``dd of=F``."""
    if not words:
        return ()
    name, args = _basename(words[0]), [w for w in words[1:] if not w.startswith("-")]
    if name == "tee":
        return tuple(args)
    if name in _LAST_ARG_WRITERS and len(args) >= 2:
        return (args[-1],)
    if name == "dd":
        return tuple(w[3:] for w in words[1:] if w.startswith("of="))
    if name in _ALL_ARGS_WRITERS:
        return tuple(args)
    if name in _AFTER_FIRST_WRITERS:
        return tuple(args[1:])
    if name in _IN_PLACE_EDITORS:
        return _edited_in_place(words[1:], args)
    return ()


def _edited_in_place(options_and_args: tuple[str, ...], args: list[str]) -> tuple[str, ...]:
    """``sed -i 's/a/b/' F`` and ``perl -pi -e '...' F`` rewrite F."""
    flags = [w for w in options_and_args if w.startswith("-") and not w.startswith("--")]
    in_place = any(w.startswith("--in-place") for w in options_and_args) or any(
        "i" in w[1:].split(".", 1)[0] for w in flags
    )
    if not in_place:
        return ()
    scripted = any(
        w in ("-e", "-f", "--expression", "--file") or w.startswith(("-e", "-f")) for w in flags
    ) or any(w.startswith(("--expression", "--file")) for w in options_and_args)
    # Without -e the first operand is the script; the values of -e and -f are operands too,
    # so whatever they are, every operand after them is one of the files.
    return tuple(args if scripted else args[1:])


def _basename(word: str) -> str:
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word else word


def _home_relative(text: str) -> bool:
    """``$HOME/x`` and ``${HOME}/x`` are computed, yet their target is known."""
    return re.fullmatch(r"(\$HOME|\$\{HOME\})(/[^$`*?\[]*)?", text) is not None
