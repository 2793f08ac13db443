"""Which arguments are a part of the caller's object reached by counted indexes (``counted_state.py``).

Such an argument (``self.layers[i + 1].qweight`` in ``for i in range(n)``) is state made by no op: not bound to a
fresh name before the call, nothing to keep. An index is counted only where it is an integer for certain: a
counter rebound in the loop, a parameter, or a name the function binds otherwise may hold a tensor, whose
arithmetic would run an op; such an argument is bound first, as before.
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.counted_state import counted_state, loop_counts


def _fn(source: str) -> ast.FunctionDef:
    fn = ast.parse(source).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return fn


def _expr(text: str) -> ast.expr:
    node = ast.parse(text, mode="eval").body
    return node


COUNTED = """\
def f(self, x, t):
    n = len(self.layers)
    for i in range(n):
        for j, layer in enumerate(self.layers):
            x = layer(x)
    for k in range(3):
        k = k + 1
    for (a, b) in zip(x, x):
        pass
    return x
"""


def test_loop_counts() -> None:
    """``i`` and ``j`` count; ``k`` is rebound in its body, ``a`` and ``b`` come from no ``range``/``enumerate``,
    ``t`` is a parameter."""
    assert loop_counts(_fn(COUNTED)) == frozenset({"i", "j"})


def test_a_parameter_named_like_a_counter_is_no_count() -> None:
    fn = _fn("def f(self, i):\n    for i in range(3):\n        pass\n")
    assert loop_counts(fn) == frozenset()


@pytest.mark.parametrize(
    ("text", "counted"),
    [
        ("self.layers[i + 1].qweight", True),
        ("self.layers[i].mlp.weight", True),
        ("self.layers[len(self.layers) - 1 - i]", True),
        ("self.blocks[i][j + 1]", True),
        ("self.layers[0].qweight", False),  # constant indexes already count as state (arguments.py)
        ("self.layers[t + 1].qweight", False),  # t may be a tensor
        ("self.layers[k].qweight", False),  # k is rebound
        ("other.layers[i + 1].qweight", False),  # not the caller's object
        ("self.layers[i + 1].qweight.t()", False),  # a call: an op
        ("self.layers[i / 2]", False),  # no integer for certain
        ("self.layers[True + i]", False),
    ],
)
def test_counted_state(text: str, counted: bool) -> None:
    assert counted_state(_expr(text), "self", loop_counts(_fn(COUNTED))) is counted
