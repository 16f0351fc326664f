"""The shell lexer: a command's text into raw simple commands, following bash's quoting.

One pass finds every place a command can start (after ``&&``, ``||``, ``;``, ``|``, ``&`` and
newlines, inside ``( )`` and ``{ }``, ``$( )``, backticks, ``<( )`` and ``>( )``) and every
redirection target, with each word's flags (quoted, computed at run time). What the words
mean (wrappers, writers, scripts run by ``bash -c``) is ``shell_split``'s and
``shell_commands``'s business.
"""

from __future__ import annotations

import re

import attrs

MAX_DEPTH = 8
_FD_PREFIX = re.compile(r"[0-9]+")


class UnparseableError(Exception):
    """The command as a whole cannot be split (an unclosed quote, ``case``)."""


@attrs.define
class Word:
    text: str = ""
    started: bool = False  # distinguishes "" (an empty word) from no word
    quoted: bool = False
    computed: bool = False  # contains $-expansion, substitution or an unquoted glob


@attrs.define
class RawSegment:
    """A segment as lexed: words with their flags, and redirect targets."""

    words: list[Word] = attrs.Factory(list)
    writes: list[Word] = attrs.Factory(list)


class Lexer:
    """A single pass over the source, building raw segments.

    Nested commands found on the way (``$(...)``, backticks) are split by a
    recursive call and collected in ``nested``; the word that held them keeps
    their source text and is marked computed.
    """

    def __init__(self, src: str, depth: int) -> None:
        self.src = src
        self.pos = 0
        self.depth = depth
        self.raws: list[RawSegment] = []
        # Commands found inside this one, as (raw segment, depth), in the order met.
        self.nested: list[tuple[RawSegment, int]] = []
        self._heredocs: list[tuple[str, bool, bool]] = []  # delimiter, quoted, strip tabs

    # -- the command list -------------------------------------------------

    def parse_list(self, terminator: str | None) -> None:
        """Lex until the end of the source, or an unmatched ``)`` if terminator."""
        seg = RawSegment()
        word = Word()
        pending: str | None = None  # redirect kind awaiting its target word
        parens = 0
        src = self.src

        def end_word() -> None:
            nonlocal word, pending
            if not word.started:
                return
            if pending is None and not seg.words and not word.quoted and word.text == "case":
                raise UnparseableError("case statements are not analysed")
            if pending is None:
                seg.words.append(word)
            elif pending == "write":
                seg.writes.append(word)
            elif pending == "heredoc":
                self._heredocs.append((word.text, word.quoted, False))
            elif pending == "heredoc-strip":
                self._heredocs.append((word.text, word.quoted, True))
            pending = None
            word = Word()

        def end_segment() -> None:
            nonlocal seg
            end_word()
            if pending is not None:
                raise UnparseableError("a redirection has no target")
            if seg.words or seg.writes:
                self.raws.append(seg)
            seg = RawSegment()

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
                    raise UnparseableError("the command ends with a lone backslash")
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
                        raise UnparseableError("a redirection has no target")
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
                    raise UnparseableError("a ')' has no matching '('")
                end_segment()
                parens -= 1
                self.pos += 1
            elif c in "<>":
                if nxt == "(":  # process substitution <(...) or >(...)
                    self.pos += 2
                    self._nested_until_paren(word)
                    continue
                if word.started and not word.quoted and _FD_PREFIX.fullmatch(word.text):
                    word = Word()  # "2>": the digits name a file descriptor
                else:
                    end_word()
                if pending is not None:
                    raise UnparseableError("a redirection has no target")
                pending = self._redirect()
            else:
                if c in "*?[{":  # globs and brace expansion change the words at run time
                    word.computed = True
                word.text += c
                word.started = True
                self.pos += 1
        if terminator == ")":
            raise UnparseableError("a '$(' or '(' is never closed")
        if parens:
            raise UnparseableError("a '(' is never closed")
        end_segment()
        if self._heredocs:
            self._heredocs.clear()  # a here-document cut off by the end: bash accepts it

    def _operator(self) -> str:
        """Consume a control operator at ``pos`` and return it."""
        for op in ("&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", "|", ";", "&"):
            if self.src.startswith(op, self.pos):
                if op in {";;", ";;&", ";&"}:
                    raise UnparseableError("case statements are not analysed")
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

    def _single_quoted(self, word: Word) -> None:
        end = self.src.find("'", self.pos + 1)
        if end < 0:
            raise UnparseableError("a single quote is never closed")
        word.text += self.src[self.pos + 1 : end]
        word.started = word.quoted = True
        self.pos = end + 1

    def _double_quoted(self, word: Word) -> None:
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
        raise UnparseableError("a double quote is never closed")

    def _dollar(self, word: Word) -> None:
        src = self.src
        start = self.pos
        nxt = src[self.pos + 1] if self.pos + 1 < len(src) else ""
        word.started = True
        if src.startswith("$((", self.pos):
            end = _matching_double_paren(src, self.pos + 3)
            inner = src[self.pos + 3 : end]
            if "$(" in inner or "`" in inner:
                raise UnparseableError("command substitution inside $((...)) is not analysed")
            self.pos = end + 2
        elif nxt == "(":
            self.pos += 2
            self._nested_until_paren(word)
            return
        elif nxt == "{":
            end = src.find("}", self.pos)
            if end < 0:
                raise UnparseableError("a '${' is never closed")
            inner = src[self.pos + 2 : end]
            if "$" in inner or "`" in inner or "{" in inner:
                raise UnparseableError("nested expansions inside ${...} are not analysed")
            self.pos = end + 1
        elif nxt == "'":  # $'...' ANSI-C quoting
            end = src.find("'", self.pos + 2)
            if end < 0:
                raise UnparseableError("a $'...' quote is never closed")
            body = src[self.pos + 2 : end]
            if "\\" in body:
                raise UnparseableError("escapes inside $'...' are not analysed")
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

    def _nested_until_paren(self, word: Word) -> None:
        """Split a ``$( ... )``-like body starting at ``pos``; ``pos`` ends after ``)``."""
        start = self.pos - 2
        inner = Lexer(self.src, self.depth + 1)
        if inner.depth > MAX_DEPTH:
            raise UnparseableError(f"commands are nested more than {MAX_DEPTH} levels deep")
        inner.pos = self.pos
        inner.parse_list(terminator=")")
        self.nested.extend(inner.nested)
        self.nested.extend((raw, inner.depth) for raw in inner.raws)
        self.pos = inner.pos
        word.text += self.src[start : self.pos]
        word.started = word.computed = True

    def _backticks(self, word: Word) -> None:
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
            raise UnparseableError("a backtick is never closed")
        self.nested.extend(lex("".join(body), depth=self.depth + 1))
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
                raise UnparseableError(
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
                raise UnparseableError("a '$((' is not closed by '))'")
            depth -= 1
        i += 1
    raise UnparseableError("a '$((' is never closed")


def lex(source: str, *, depth: int) -> list[tuple[RawSegment, int]]:
    """Every simple command of ``source`` as (raw segment, nesting depth): the commands nested
    inside (``$(...)``, backticks) first, in the order met, then the top-level ones."""
    if depth > MAX_DEPTH:
        raise UnparseableError(f"commands are nested more than {MAX_DEPTH} levels deep")
    lexer = Lexer(source, depth)
    lexer.parse_list(terminator=None)
    return [*lexer.nested, *((raw, depth) for raw in lexer.raws)]
