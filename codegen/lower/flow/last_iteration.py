"""The ``if`` tests a ``for`` loop's last iteration knows false: what they guard is not pending after the loop.

cann-recipes' LongCat-Flash layer loop stages the next layer's weights one layer ahead:
``next_layer = self.layers[i + 1] if i + 1 < len(self.layers) else None``, then ``if next_layer is not None:
next_up_weight = self.stage_weights(...)``, which the next iteration reads and so joins. The loop ends after an
iteration with no next layer: no staging was issued there, and the one issued before it was joined there. The
analysis walks such a loop's body once more as its last iteration (``loop_fixpoint.py``), from every state an
iteration may start in, with these tests false, and leaves the loop in the state that walk ends in (or in the one
it entered with, where the loop runs no iteration): the function's end waits for no staging.

Only tests that are exact: ``i + 1 < n`` of ``for i in range(n)`` (``n`` an integer constant or a name the body does
not bind, ``i`` bound nowhere else in the body), ``i + 1 < len(self.layers)`` of ``for i, x in enumerate(self.layers)``
over a layer list of fixed length (``loop_count.py``), and ``x is not None`` where ``x`` is bound by one statement of
the loop, standing in its body before the test's ``if``, to ``self.layers[...] if <such a test> else None`` (an
element of such a list is an instance of its layer class, never None). The loop has no ``else``; a ``break`` leaves
it as before (its state is every iteration's).
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.walked import walked, walked_of
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.loop_count import enumerated, range_loop

__all__ = ["LastIterations", "another", "counted", "false_at_last", "false_in_last"]


@attrs.frozen
class LastIterations:
    """What the analysis knows of the last iteration of a function's loops."""

    tests: dict[ast.If, ast.For] = attrs.Factory(dict)  # an ``if`` whose test that loop's last iteration knows false
    entered: frozenset[ast.For] = frozenset()  # loops that surely run an iteration


def false_at_last(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, receiver: str | None, sized: frozenset[str]
) -> LastIterations:
    """The tests the last iteration of each loop of ``fn`` knows false, and the loops that surely run."""
    found: dict[ast.If, ast.For] = {}
    entered: set[ast.For] = set()
    for loop in walked_of(fn, ast.For):
        found |= {stmt: loop for stmt in false_in_last(loop, receiver, sized)}
        if found and loop in found.values():
            entered |= {loop} if _entered(fn, loop, receiver, sized) else set()
    return LastIterations(tests=found, entered=frozenset(entered))


def false_in_last(loop: ast.For, receiver: str | None, sized: frozenset[str]) -> list[ast.If]:
    """The ``if`` statements of the loop's body whose test its last iteration knows false."""
    test = another(loop, receiver, sized)
    return _guarded(loop, test, receiver, sized) if test and not loop.orelse else []


def _entered(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, loop: ast.For, receiver: str | None, sized: frozenset[str]
) -> bool:
    """The loop surely runs an iteration: ``range(k)`` of a constant ``k >= 1``, or ``enumerate(self.layers)`` after
    a statement of the function's body, before the loop, that looks up ``self.layers[k]`` (``k`` a constant ``>= 0``)
    wherever it runs: that list has an element (its length is fixed)."""
    counted = range_loop(loop)
    if counted is not None and counted.constant is not None:
        return counted.constant >= 1
    index, count = enumerated(loop, receiver, sized)
    if not index or loop not in fn.body:
        return False
    walked_list = count.removeprefix("len(").removesuffix(")")
    before = fn.body[: fn.body.index(loop)]
    return any(_looks_up(stmt, walked_list) for stmt in before if not hasattr(stmt, "body"))


def _looks_up(stmt: ast.stmt, walked_list: str) -> bool:
    """``stmt`` evaluates ``<walked_list>[k]`` on every path through it (no ``and``/``or``, conditional expression,
    lambda or comprehension around it)."""
    lazy = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    if any(isinstance(n, lazy) for n in walked(stmt)):
        return False
    return any(
        isinstance(n.slice, ast.Constant)
        and type(n.slice.value) is int
        and n.slice.value >= 0
        and ast.unparse(n.value) == walked_list
        for n in walked_of(stmt, ast.Subscript)
    )


def another(loop: ast.For, receiver: str | None, sized: frozenset[str]) -> str:
    """``"i + 1 < n"``: the test that holds exactly where another iteration follows ("": none is known)."""
    index, count = counted(loop, receiver, sized)
    return f"{index} + 1 < {count}" if index else ""


def counted(loop: ast.For, receiver: str | None, sized: frozenset[str]) -> tuple[str, str]:
    """``("i", "n")``: the loop's index and its count as spelled, where ``i + 1 < n`` is ``another``'s test (empty
    strings: none is known)."""
    index, count = enumerated(loop, receiver, sized)
    if index:
        return index, count
    found = range_loop(loop)
    if found is None or not found.count_kept() or not found.index_kept():
        return "", ""
    return found.index, ast.unparse(found.count)


def _guarded(loop: ast.For, test: str, receiver: str | None, sized: frozenset[str]) -> list[ast.If]:
    """The ``if`` statements of the loop's body whose test is ``test``, or ``x is not None`` of a local bound
    before it in the body to an element of a layer list under ``test``, else None."""
    found: list[ast.If] = []
    nexts: set[str] = set()
    for stmt in loop.body:
        if isinstance(stmt, ast.If) and _false_when_last(stmt.test, test, nexts):
            found.append(stmt)
        nexts = {n for n in nexts if n not in bound_names(stmt)} | _next_element(stmt, loop, test, receiver, sized)
    return found


def _false_when_last(node: ast.expr, test: str, nexts: set[str]) -> bool:
    if ast.unparse(node) == test:
        return True
    is_not_none = (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.IsNot)
        and isinstance(node.comparators[0], ast.Constant)
        and node.comparators[0].value is None
    )
    return is_not_none and isinstance(node.left, ast.Name) and node.left.id in nexts  # type: ignore[attr-defined]


def _next_element(stmt: ast.stmt, loop: ast.For, test: str, receiver: str | None, sized: frozenset[str]) -> set[str]:
    """``{"next_layer"}`` of ``next_layer = self.layers[i + 1] if <test> else None``, the loop's only binding of
    that name."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return set()
    value, name = stmt.value, stmt.targets[0].id
    if not (isinstance(value, ast.IfExp) and ast.unparse(value.test) == test):
        return set()
    none = isinstance(value.orelse, ast.Constant) and value.orelse.value is None
    body = value.body
    element = isinstance(body, ast.Subscript) and isinstance(body.value, ast.Attribute)
    listed = element and ast.unparse(body.value) in {f"{receiver}.{attr}" for attr in sized}  # type: ignore[attr-defined]
    return {name} if none and listed and _bound_once(loop, name) else set()


def _bound_once(loop: ast.For, name: str) -> bool:
    """One store of ``name`` in the loop, and no other binding (``del``, a definition, an import, ``except as``)."""
    stores = [n for n in walked(loop) if isinstance(n, ast.Name) and n.id == name]
    named = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)
    others = any(getattr(n, "name", None) == name for n in walked(loop) if isinstance(n, named))
    imported = any(a.asname == name or a.name == name for a in walked_of(loop, ast.alias))
    return (
        sum(isinstance(n.ctx, ast.Store) for n in stores) == 1
        and not others
        and not imported
        and not any(isinstance(n.ctx, ast.Del) for n in stores)
    )
