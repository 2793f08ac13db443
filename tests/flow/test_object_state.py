"""What a call through the caller's object may change of it (``codegen/lower/flow/object_state.py``): a submodule's
call its group only; anything for a method, for an attribute stored outside ``__init__`` or twice, for one built
from a factory ``__init__`` is given or handed the object whole, and where a base of the package is not held.
"""

from __future__ import annotations

import ast

import pytest

from codegen.index.index import build_index
from codegen.lower.flow.object_state import object_state

BASE = """\
from torch import nn


class Base(nn.Module):
    def __init__(self, make):
        super().__init__()
        self.inner = nn.Linear(3, 3)
        self.wrap = Wrapper(self.inner)
        self.norm = nn.LayerNorm(3)
        self.made = make(3)
        self.parent = Holder(self)
        self.swapped = nn.Linear(3, 3)
        self.twice = nn.Linear(3, 3)

    def reset(self):
        self.swapped = nn.Identity()
"""

MODEL = """\
from torch import nn

from .base import Base


class Model(Base):
    def __init__(self):
        super().__init__(nn.Linear)
        self.twice = nn.Linear(3, 3)
        self.proj = nn.Linear(3, 3)

    def forward(self, x):
        return x
"""


def _state(files: list[tuple[str, str]]) -> object:
    index = build_index(files)
    tree = index.returns.tree_of("pkg.model")  # type: ignore[attr-defined]
    return object_state(index, "pkg.model", tree, "Model", "self")


def _changes(state: object, source: str) -> set[str]:
    return set(state.changes(ast.parse(source)))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("call", "changed"),
    [
        ("self.proj(x)", {"proj"}),
        ("self.norm(x)", {"norm"}),
        ("self.wrap.run(x)", {"wrap", "inner"}),
        ("self.inner(x)", {"wrap", "inner"}),
        ("self.made(x)", {"*"}),  # a factory __init__ is given
        ("self.parent(x)", {"*"}),  # built from the object itself
        ("self.swapped(x)", {"*"}),  # stored again by reset()
        ("self.twice(x)", {"*"}),  # stored by the class and its base
        ("self.forward(x)", {"*"}),  # a method
        ("helper(self)", {"*"}),
        ("super().forward(x)", {"*"}),
        ("torch.relu(x)", set()),
    ],
)
def test_what_a_call_changes(call: str, changed: set[str]) -> None:
    state = _state([("pkg.base", BASE), ("pkg.model", MODEL)])
    assert _changes(state, call) == changed


def test_a_base_the_run_does_not_hold_leaves_the_object_unknown() -> None:
    state = _state([("pkg.model", MODEL)])
    assert _changes(state, "self.proj(x)") == {"*"}
