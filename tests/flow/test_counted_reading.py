"""One reading of integer counts and parts of the object's state, for argument binding and for GE's given values.

``counted_state.py`` (an argument ``self.layers[i + 1].qweight`` is state, not bound or kept) and ``ge_given.py``
(a call reading only what its function was given needs no GE fork edge) read loop counters, counted indexes and
``len`` of state alike; GE's reading also takes a comparison of counts and a choice between parts of the state.
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow.counted_state import counted, loop_counts, state_part

_FN = """\
def forward(self, x, n):
    for i, layer in enumerate(self.layers):
        nxt = self.layers[i + 1] if i + 1 < len(self.layers) else None
    for j in range(n):
        pass
    for k in range(2):
        pass
    k = x
"""


def _expr(text: str) -> ast.expr:
    return ast.parse(text, mode="eval").body


def test_the_counters_are_the_loops_own() -> None:
    fn = ast.parse(_FN).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert loop_counts(fn) == {"i", "j"}  # ``k`` is bound again, to a tensor


@pytest.mark.parametrize(
    ("text", "plain", "tests"),
    [
        ("i + 1", True, True),
        ("len(self.layers) - 1", True, True),
        ("len(self.layers[i])", True, True),
        ("i + 1 < len(self.layers)", False, True),
        ("True", False, False),
        ("i / 2", False, False),
        ("len(x)", False, False),
    ],
)
def test_counted(text: str, plain: bool, tests: bool) -> None:
    counts = frozenset({"i"})
    assert counted(_expr(text), "self", counts) is plain
    assert counted(_expr(text), "self", counts, tests=True) is tests


@pytest.mark.parametrize(
    ("text", "plain", "choices"),
    [
        ("self.layers[i + 1].qweight", True, True),
        ("self", True, True),
        ("self.layers[i + 1] if i + 1 < len(self.layers) else None", False, True),
        ("self.layers[x]", False, False),
        ("other.layers[0]", False, False),
    ],
)
def test_state_part(text: str, plain: bool, choices: bool) -> None:
    counts = frozenset({"i"})
    assert state_part(_expr(text), "self", counts) is plain
    assert state_part(_expr(text), "self", counts, choices=True) is choices
