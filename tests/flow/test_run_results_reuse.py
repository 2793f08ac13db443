"""A reading of what a function of the run returns is reused under another ``seen`` only where it would be the same
(``codegen/lower/flow/run_results.py``): none of the functions it met is being read around it, and its depth stays
under the limit. Each reading kept for the run is compared with the same question read afresh (no kept readings),
asked in orders that offer a kept reading first: around a cycle (``a`` and ``b`` call each other), under a ``seen``
holding a function the kept reading met (``p`` calls ``q``) and at the depth limit (``f0`` ... ``f8``, where the cut
gives every parameter and the uncut reading of ``f8`` gives one).
"""

from __future__ import annotations

import ast

import pytest

from codegen.lower.flow import run_results
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.result_aliases import _callee_pairs, _value_held

CHAIN = "\n".join(f"def f{i}(t, u):\n    return f{i + 1}(t, u)\n" for i in range(8)) + "def f8(t, u):\n    return t\n"
MODULE = f"""\
def a(t, u, n):
    if n:
        return b(u, t, n - 1)
    return t


def b(t, u, n):
    return a(t, u, n)


def c(t, u):
    return b(t, u, 1)


def p(t, u):
    return q(t, u)


def q(t, u):
    return t


{CHAIN}
"""


class _RunFunctions(dict):
    """A module's functions as a run gives them: with an index, so readings are kept for the run."""

    def __init__(self, functions: dict[str, ast.FunctionDef], index: object) -> None:
        super().__init__(functions)
        self.index = index


def _functions() -> dict[str, ast.FunctionDef]:
    tree = ast.parse(MODULE)
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _returned(functions: dict, name: str, seen: tuple[str, ...]) -> set[str]:
    scope = Scope(functions, None, None)
    held = frozenset(functions[s] for s in seen)
    return run_results.returned_params(functions[name], scope, (_value_held, _callee_pairs), held)


QUESTIONS = [
    ("b", ()),
    ("a", ("b",)),
    ("a", ()),
    ("c", ()),
    ("b", ("c",)),
    ("f8", ()),
    ("f4", ()),
    ("f0", ()),
    ("f8", ("f0", "f1", "f2", "f3", "f4", "f5", "f6")),
    ("f8", ("f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7")),
    ("p", ()),
    ("p", ("q",)),
]


ORDERS = [list(range(len(QUESTIONS))), list(reversed(range(len(QUESTIONS)))), [5, 6, 9, 7, 8, 1, 0, 2, 4, 3, 10, 11]]


@pytest.mark.parametrize("order", ORDERS)
def test_kept_readings_answer_as_fresh_ones(order: list[int]) -> None:
    fresh = _functions()
    kept = _RunFunctions(fresh, index=object())
    for at in order:
        name, seen = QUESTIONS[at]
        assert _returned(kept, name, seen) == _returned(fresh, name, seen), (name, seen)


def test_the_cut_and_the_cycle_change_the_answer() -> None:
    """The questions above can tell a wrong reuse: a reading cut at the depth, or met again, differs."""
    fresh = _functions()
    assert _returned(fresh, "f8", ()) == {"t"}
    assert _returned(fresh, "f0", ()) == {"t", "u"}  # ``f8`` is read at the depth limit: any parameter
    assert _returned(fresh, "a", ("b",)) == {"t", "u"}  # ``b`` met again: any of its parameters
    assert _returned(fresh, "p", ()) == {"t"}
    assert _returned(fresh, "p", ("q",)) == {"t", "u"}  # ``q`` is being read around it
