"""Every record's repr, equality and hash are the ones attrs would have written
(seri.pure.value_record).

Frozen records are declared ``@attrs.frozen(repr=False, eq=False)`` on ``ValueRecord``
(attrs compiling those methods per class cost start-up time). The oracle here is attrs
itself: for each record class a twin is made with attrs' own generated methods, both get
the same field values, and they must print, compare and hash alike, whatever the values.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seri
from seri.pure.otlp_settings import Target
from seri.pure.records import Message, ToolCall
from seri.pure.value_record import ValueRecord


def _record_classes() -> list[type[Any]]:
    found: dict[str, type[Any]] = {}
    for info in pkgutil.walk_packages(seri.__path__, "seri."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and attrs.has(value) and value.__module__ == info.name:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


RECORDS = _record_classes()


def _frozen(cls: type[Any]) -> bool:
    # attrs gives a frozen class its own __setattr__, which refuses.
    return getattr(cls.__setattr__, "__name__", "") == "_frozen_setattrs"


@functools.cache
def _twin(cls: type[Any]) -> type[Any]:
    """``cls``'s fields on a class whose methods attrs generates."""
    fields = {item.name: attrs.field(repr=item.repr) for item in attrs.fields(cls)}
    twin = attrs.make_class(
        cls.__name__, fields, repr=True, eq=True, frozen=_frozen(cls), slots=True, kw_only=True
    )
    twin.__qualname__ = cls.__qualname__
    return twin


@functools.cache
def _subclass(cls: type[Any]) -> type[Any]:
    return attrs.make_class(
        f"{cls.__name__}Kin", {}, bases=(cls,), repr=False, eq=False, frozen=_frozen(cls)
    )


def _with_values(cls: type[Any], values: dict[str, Any]) -> Any:
    """An instance of ``cls`` holding ``values``, its __init__ (and validators) bypassed."""
    instance = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(instance, name, value)
    return instance


def _hash(value: object) -> int | str:
    try:
        return hash(value)
    except TypeError as exc:
        return f"TypeError: {exc}"


def test_the_records_are_many_and_every_one_shares_the_methods() -> None:
    assert len(RECORDS) > 150
    own_repr = [c.__qualname__ for c in RECORDS if c.__repr__ is not ValueRecord.__repr__]
    assert own_repr == [], "declare these @attrs.frozen(repr=False, eq=False) on ValueRecord"
    frozen_own_eq = [
        c.__qualname__
        for c in RECORDS
        if _frozen(c)
        and (c.__eq__ is not ValueRecord.__eq__ or c.__hash__ is not ValueRecord.__hash__)
    ]
    assert frozen_own_eq == [], "declare these @attrs.frozen(repr=False, eq=False)"
    # A mutable record keeps attrs' __eq__, and with it no hash (a value that can change).
    assert all(c.__hash__ is None for c in RECORDS if not _frozen(c))


# No NaN: whether a field holding NaN equals itself turns on whether both records hold the same
# float object (tuple comparison checks identity first), not on the record's methods.
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.tuples(inner, inner) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


# A few examples per class (there are ~180 classes): the values, not the class, vary them.
# Settings has ~60 fields: drawing them all is slow, and says nothing about the record.
@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
@given(data=st.data())
def test_a_record_prints_compares_and_hashes_as_attrs_would(
    cls: type[Any], data: st.DataObject
) -> None:
    names = [item.name for item in attrs.fields(cls)]
    first = {name: data.draw(values, label=name) for name in names}
    # The second record: the same values, or some of them changed.
    second = {
        name: data.draw(st.just(value) | values, label=f"second {name}")
        for name, value in first.items()
    }
    twin = _twin(cls)
    ours = (_with_values(cls, first), _with_values(cls, second))
    theirs = (twin(**first), twin(**second))
    assert repr(ours[0]) == repr(theirs[0])
    assert (ours[0] == ours[1]) == (theirs[0] == theirs[1])
    assert (ours[0] != ours[1]) == (theirs[0] != theirs[1])
    # Another class, even a subclass with the same fields and values, is not equal.
    assert ours[0].__eq__(theirs[0]) is NotImplemented
    assert ours[0] != theirs[0]
    kin = _with_values(_subclass(cls), first)
    assert ours[0].__eq__(kin) is NotImplemented
    assert ours[0] != kin
    if _frozen(cls):
        assert isinstance(_hash(ours[0]), str) == isinstance(_hash(theirs[0]), str)
        if ours[0] == ours[1] and isinstance(_hash(ours[0]), int):
            assert hash(ours[0]) == hash(ours[1])


def test_nested_records_and_hidden_fields() -> None:
    call = ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')
    message = Message(role="assistant", text="it's", tool_calls=(call,))
    assert repr(message).startswith("Message(role='assistant', text=\"it's\", ")
    assert "tool_calls=(ToolCall(id='c1', name='bash'," in repr(message)
    assert message == Message(role="assistant", text="it's", tool_calls=(call,))
    assert message != Message(role="assistant", text="it is", tool_calls=(call,))
    assert len({message, Message(role="assistant", text="it's", tool_calls=(call,))}) == 1
    secret = Target(
        url="http://collector", protocol="http/json", headers=(("authorization", "Bearer sk-x"),)
    )
    assert "sk-x" not in repr(secret)
    assert "headers" not in repr(secret)
