"""What makes a record a value: one ``__repr__``, ``__eq__`` and ``__hash__`` for all of them.

Every record is an attrs class, and attrs writes ``__repr__``, ``__eq__`` and ``__hash__``
for each class as source text and compiles them when the class is made: ~0.2 ms a class,
paid at import, and about a hundred records load before ``seri chat -p`` sends its first
request. So frozen records are declared ``@attrs.frozen(repr=False, eq=False)`` on
``ValueRecord`` and inherit these instead (the few mutable ``attrs.define`` ones keep attrs'
``__eq__``, which also makes them unhashable, as it should).

They behave as attrs' own do (tests/property/test_value_record.py holds them to attrs,
record class by record class): the repr is ``Name(field=value, ...)`` without the fields
declared ``repr=False`` (a header value that may hold a secret); two records are equal when
they are of the same class and their fields are equal in order, and anything else is
``NotImplemented``; equal records hash alike.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

import attrs

# Per record class: its fields' values as a tuple, read in C (made on first use).
_VALUES: dict[type, Callable[[Any], tuple[Any, ...]]] = {}


def _values(record: object) -> tuple[Any, ...]:
    kind = type(record)
    read = _VALUES.get(kind)
    if read is None:
        # Only attrs classes inherit ValueRecord, which mypy cannot see from here.
        names = [item.name for item in attrs.fields(cast(Any, kind))]
        if len(names) == 1:
            one = operator.attrgetter(names[0])
            read = _VALUES[kind] = lambda value: (one(value),)
        else:
            read = _VALUES[kind] = cast(Any, operator.attrgetter(*names)) if names else _none
    return read(record)


def _none(_record: object) -> tuple[Any, ...]:
    return ()


class ValueRecord:
    __slots__ = ()

    def __repr__(self) -> str:
        shown = []
        for item in attrs.fields(cast(Any, type(self))):
            if item.repr is False:
                continue
            value = getattr(self, item.name)
            text = item.repr(value) if callable(item.repr) else repr(value)
            shown.append(f"{item.name}={text}")
        name = type(self).__qualname__.rsplit(">.", 1)[-1]
        return f"{name}({', '.join(shown)})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _values(self) == _values(other)

    def __hash__(self) -> int:
        return hash((self.__class__, _values(self)))
