"""Every record's repr is the one attrs would have written (seri.pure.shared_repr).

Records are declared ``@attrs.frozen(repr=False)`` on ``SharedRepr`` (attrs compiling a
``__repr__`` per class cost start-up time). The oracle here is attrs itself: for each
record class a twin is made with attrs' own generated ``__repr__``, both get the same field
values, and the two reprs must be equal, whatever the values.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import seri
from seri.pure.otlp_settings import Target
from seri.pure.records import Message, ToolCall
from seri.pure.shared_repr import SharedRepr


def _record_classes() -> list[type[Any]]:
    found: dict[str, type[Any]] = {}
    for info in pkgutil.walk_packages(seri.__path__, "seri."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and attrs.has(value) and value.__module__ == info.name:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


RECORDS = _record_classes()


@functools.cache
def _twin(cls: type[Any]) -> type[Any]:
    """``cls``'s fields on a class whose ``__repr__`` attrs generates."""
    fields = {item.name: attrs.field(repr=item.repr) for item in attrs.fields(cls)}
    twin = attrs.make_class(cls.__name__, fields, repr=True, slots=True, kw_only=True)
    twin.__qualname__ = cls.__qualname__
    return twin


def _with_values(cls: type[Any], values: dict[str, Any]) -> Any:
    """An instance of ``cls`` holding ``values``, its __init__ (and validators) bypassed."""
    instance = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(instance, name, value)
    return instance


def test_the_records_are_many_and_every_one_shares_the_repr() -> None:
    assert len(RECORDS) > 150
    own = [c.__qualname__ for c in RECORDS if c.__repr__ is not SharedRepr.__repr__]
    assert own == [], f"declare these @attrs.frozen(repr=False) on SharedRepr: {own}"


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.tuples(inner, inner) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
# A few examples per class (there are ~180 classes): the values, not the class, vary the repr.
@settings(max_examples=8)
@given(data=st.data())
def test_a_record_prints_as_attrs_would(cls: type[Any], data: st.DataObject) -> None:
    names = [item.name for item in attrs.fields(cls)]
    chosen = {name: data.draw(values, label=name) for name in names}
    twin = _twin(cls)
    assert repr(_with_values(cls, chosen)) == repr(twin(**chosen))


def test_nested_records_and_hidden_fields() -> None:
    call = ToolCall(id="c1", name="bash", arguments='{"command": "ls"}')
    message = Message(role="assistant", text="it's", tool_calls=(call,))
    assert repr(message).startswith("Message(role='assistant', text=\"it's\", ")
    assert "tool_calls=(ToolCall(id='c1', name='bash'," in repr(message)
    secret = Target(
        url="http://collector", protocol="http/json", headers=(("authorization", "Bearer sk-x"),)
    )
    assert "sk-x" not in repr(secret)
    assert "headers" not in repr(secret)
