"""One ``__repr__`` for all of seri's records.

Every record is a frozen attrs class, and attrs writes a ``__repr__`` for each class as
source text and compiles it when the class is made: ~0.12 ms a class, paid at import. About
a hundred records load before ``seri chat -p`` sends its first request, so records are
declared ``@attrs.frozen(repr=False)`` on ``SharedRepr`` and inherit this one instead. It
prints what attrs' own would (``Name(field=value, ...)``), leaves out ``field(repr=False)``
(a header value that may hold a secret) and uses a field's own repr callable when it has one.
"""

from __future__ import annotations

from typing import Any, cast

import attrs


class SharedRepr:
    __slots__ = ()

    def __repr__(self) -> str:
        shown = []
        # Only attrs classes inherit this, which mypy cannot see from here.
        for item in attrs.fields(cast(Any, type(self))):
            if item.repr is False:
                continue
            value = getattr(self, item.name)
            text = item.repr(value) if callable(item.repr) else repr(value)
            shown.append(f"{item.name}={text}")
        name = type(self).__qualname__.rsplit(">.", 1)[-1]
        return f"{name}({', '.join(shown)})"
