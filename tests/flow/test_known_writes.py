"""A function's writes read once per run give every call the answer reading it again would.

``known_writes.py`` keeps what a helper writes of its parameters on its module's ``ModuleFunctions``. A reading
made inside a cycle (``f`` calls ``g``, which calls ``f`` back: the inner ``f`` reads as writing nothing) or near
the depth limit (a chain of helpers that writes nothing, where a call past the limit writes every argument)
depended on where it was asked from; kept and given to a call asked from elsewhere it would answer wrongly
(``g(p, q)`` writing nothing of ``q``, ``h0(z)`` nothing of ``z``). Each call of the caller is asked in several
orders through one shared ``ModuleFunctions``, and each answer equals that of a fresh one (nothing kept) and
what the bodies say.
"""

from __future__ import annotations

import ast
import itertools

import pytest

from codegen.index.index import build_index
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions
from codegen.lower.flow.param_writes import call_writes

_CHAIN = 20  # longer than the depth param_writes follows

SOURCE = (
    """\
def f(a, b):
    a.add_(1)
    g(b, a)


def g(x, y):
    f(y, x)


def loop(t):
    loop(t)
    t.mul_(2)


"""
    + "".join(f"def h{i}(t):\n    h{i + 1}(t)\n\n\n" for i in range(_CHAIN))
    + f"""def h{_CHAIN}(t):
    return t * 2


def caller(u, v, p, q, w, z, c):
    f(u, v)
    g(p, q)
    loop(w)
    h0(z)
    h{_CHAIN - 10}(c)
    h{_CHAIN - 3}(c)
"""
)

WRITTEN = {"f(u, v)": {"u"}, "g(p, q)": {"q"}, "loop(w)": {"w"}, "h0(z)": {"z"}, "h10(c)": set(), "h17(c)": set()}


def _setup() -> tuple[object, ast.Module, list[ast.Call]]:
    index = build_index([("m", SOURCE)])
    tree = index.returns.tree_of("m")  # type: ignore[attr-defined]
    caller = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "caller")
    return index, tree, [stmt.value for stmt in caller.body]  # type: ignore[attr-defined]


def _fresh(index: object, tree: ast.Module, call: ast.Call) -> set[str]:
    return call_writes(call, ModuleFunctions(index, "m", tree), None, None)


def test_what_the_bodies_say() -> None:
    index, tree, calls = _setup()
    assert {ast.unparse(c): _fresh(index, tree, c) for c in calls} == WRITTEN


@pytest.mark.parametrize("order", list(itertools.islice(itertools.permutations(range(6)), 0, 720, 37)))
def test_kept_readings_answer_as_fresh_ones(order: tuple[int, ...]) -> None:
    index, tree, calls = _setup()
    shared = module_functions(index, "m", tree)
    for at in order:
        assert call_writes(calls[at], shared, None, None) == _fresh(index, tree, calls[at])
    assert shared.known_writes  # some readings were kept
