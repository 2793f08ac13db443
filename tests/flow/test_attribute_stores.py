"""One reading of what a method stores on its object, with one decision for ``self.x += v``.

``scalar_attributes.py`` (which attributes surely hold no tensor) and ``object_attributes.per_call`` (which may hold
a tensor a call made) each read a method's stores, with two copies of the same walk that disagreed on an augmented
store: the first took ``self.n += v`` as storing ``v``, the second as storing an unknown value (maybe a tensor). Both
now read ``attribute_stores.object_stores``: ``self.n += v`` stores ``v`` (the new value is the old one combined
with ``v``: plain, or no new tensor, exactly when the other stores and ``v`` are), ``setattr(self, "a", v)`` stores
``v`` on ``a``, and ``setattr(self, name, v)`` any attribute.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.attribute_stores import object_stores
from codegen.lower.flow.object_attributes import per_call
from codegen.lower.flow.scalar_attributes import plain_attributes

SOURCE = """\
class Counter:
    def __init__(self, n: int):
        self.count = 0
        self.acc = 0
        self.label = "a"

    def step(self, n: int, t):
        self.count += n
        self.acc += t
        setattr(self, "label", "b")
"""

COMPUTED = """\
class Any:
    def __init__(self):
        self.count = 0

    def put(self, name, v):
        setattr(self, name, v)
"""


def _class(source: str) -> ast.ClassDef:
    cls = ast.parse(source).body[0]
    assert isinstance(cls, ast.ClassDef)
    return cls


def test_each_store_with_its_value() -> None:
    step = _class(SOURCE).body[1]
    assert isinstance(step, ast.FunctionDef)
    stores = {s.attr: ast.unparse(s.value) if s.value is not None else None for s in object_stores(step, "self")}
    assert stores == {"count": "n", "acc": "t", "label": "'b'"}


def test_an_augmented_store_is_decided_by_its_value_in_both_readers() -> None:
    cls = _class(SOURCE)
    assert per_call(cls) == {"acc"}  # ``self.count += n`` (an ``int``) makes no tensor; ``self.acc += t`` may
    assert plain_attributes([cls]) == {"count", "label"}


def test_a_computed_setattr_may_store_any_attribute() -> None:
    stores = [(s.attr, s.value) for s in object_stores(_class(COMPUTED).body[1], "self")]  # type: ignore[arg-type]
    assert stores == [("*", None)]
    assert plain_attributes([_class(COMPUTED)]) == frozenset()
