"""A regular expression compiled when it is first used, not when its module is imported.

seri's modules hold many patterns (provider error wordings, overflow forms, markdown) that a
run needs only when that case arrives; compiling them all at import cost a noticeable share
of `seri chat -p`'s start-up. A ``LazyPattern`` is written where a ``re.compile`` would be
and used the same way.
"""

from __future__ import annotations

# Not even `re` loads at import: `seri sessions` neutralises its table through a module
# that holds a LazyPattern, and never needs it for ASCII text.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterator
    from typing import Any


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled on first use."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            import re

            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        return self.compiled.search(text, *args)

    def match(self, text: str, *args: int) -> re.Match[str] | None:
        return self.compiled.match(text, *args)

    def fullmatch(self, text: str, *args: int) -> re.Match[str] | None:
        return self.compiled.fullmatch(text, *args)

    def finditer(self, text: str, *args: int) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text, *args)

    def findall(self, text: str, *args: int) -> list[Any]:
        return self.compiled.findall(text, *args)

    def split(self, text: str, maxsplit: int = 0) -> list[str | Any]:
        return self.compiled.split(text, maxsplit)

    def sub(self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0) -> str:
        return self.compiled.sub(repl, text, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], text: str, count: int = 0
    ) -> tuple[str, int]:
        return self.compiled.subn(repl, text, count)
