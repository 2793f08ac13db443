"""State registered through ``nn.Module``'s own methods is stored there: never a plain number.

``self.register_buffer("buf", t)`` binds ``self.buf`` as surely as ``self.buf = t`` does, but no assignment spells
it. Where the class's only other store of ``buf`` was ``self.buf += 1`` (an augmented store, plain when its value
is and the attribute's other stores are), ``scalar_attributes.py`` read the buffer as a number that no call writes:
``bump(self.buf)``'s in-place write was hidden, ``hoist.py`` moved ``b = self.side(self.buf)`` above it, and the
side stream read the buffer before the caller's write (wrong numerics, a race on every event target).
``attribute_stores.py`` now reads ``register_buffer``/``register_parameter``/``register_module``/``add_module``
with a literal name as a store of their value on that attribute (a computed name: any attribute), and an attribute
stored only by augmented stores holds what it was first given where the class does not say: not plain.
"""

from __future__ import annotations

import ast

import pytest
import torch
from method_caller import caller_source
from method_source import method_source
from method_trace import NATIVE, TARGETS, eager_result, generated, sync_counts

from codegen.lower.flow.scalar_attributes import plain_attributes

SOURCE = """\
import torch
from torch import nn
from npudsl import on_stream


def bump(t):
    t.add_(1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("buf", torch.ones(3))
        self.steps = 0

    def tick(self):
        self.buf += 1
        self.steps += 1

    @on_stream("side")
    def side(self, t):
        return t * 2

    def helper(self, x):
        a = self.side(x)
        bump(self.buf)
        b = self.side(self.buf)
        c = x.relu()
        return a + b + c
""" + caller_source()


def _classes(source: str) -> list[ast.ClassDef]:
    return [n for n in ast.parse(source).body if isinstance(n, ast.ClassDef)]


def test_a_registered_buffer_is_no_plain_attribute() -> None:
    assert plain_attributes(_classes(SOURCE)[:1]) == frozenset({"steps"})


@pytest.mark.parametrize(
    "store",
    ['self.register_parameter("buf", p)', 'self.add_module("buf", p)', 'setattr(self, "buf", p)', "self.buf = p"],
)
def test_every_spelling_of_a_store_counts(store: str) -> None:
    source = f"class M:\n    def __init__(self, p):\n        {store}\n\n    def tick(self):\n        self.buf += 1\n"
    assert plain_attributes(_classes(source)) == frozenset()


def test_only_augmented_stores_are_not_plain() -> None:
    source = "class M:\n    def tick(self):\n        self.n += 1\n"
    assert plain_attributes(_classes(source)) == frozenset()


def test_the_call_after_the_write_stays_after_it() -> None:
    body = method_source(generated(SOURCE, "portable"), "helper")
    assert body.index("bump(self.buf)") < body.index("b = self.side(self.buf)")


@pytest.mark.parametrize("target", TARGETS)
def test_race_free_and_exact(target: str) -> None:
    x = torch.randn(3)
    want = eager_result(SOURCE, "helper", x, runs=2 if target in NATIVE else 1)  # the buffer grows per call
    assert sync_counts(generated(SOURCE, target), target, "helper", x, want)["switch"] >= 1
