"""Where a ``for`` loop's count can be spelled: ``i + 1 < len(self.layers)`` holds exactly where another iteration
follows; and the one reading of ``for i in range(n)`` every rule about a loop's count shares.

A model's layer loop walks ``enumerate(self.layers)``. Its index ``i`` reaches ``len(self.layers) - 1`` in the last
iteration, and that length is the list's when the loop began only where nothing changes it: a layer list of the
caller's object whose every store is in ``__init__`` and that no method grows or changes in place
(``codegen/index/elements.py``, the same list whose elements' calls the run resolves). The index is a name the
body binds nowhere else. ``next_iteration.py`` keeps inputs and records joins by this test; ``last_iteration.py``
knows it false in the loop's last iteration.

``for i in range(n)`` is read once (:func:`range_loop`), and each rule asks the premise it needs of ``n``: that it
holds one value from before the loop to the function's end (``bound_once``: a micro-batch's join slots,
``slot_loops.py``), that it is a constant or a length taken outside the loop (``a_length``: keeps only a next
iteration needs, ``next_iteration.py``), or that the body does not rebind it (``count_kept``: the last iteration's
tests, ``last_iteration.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.index.paths import dotted_name
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.exprs import bound_names

__all__ = ["RangeLoop", "enumerated", "range_loop"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def enumerated(loop: ast.For, receiver: str | None, sized: frozenset[str]) -> tuple[str, str]:
    """``("i", "len(self.layers)")`` of ``for i, x in enumerate(self.layers)`` over a layer list of fixed length
    (``sized``: those of the caller's object, ``receiver``); empty strings otherwise."""
    call, target = loop.iter, loop.target
    if not (isinstance(call, ast.Call) and dotted_name(call.func) == "enumerate"):
        return "", ""
    if len(call.args) != 1 or call.keywords or not isinstance(target, ast.Tuple) or len(target.elts) != 2:
        return "", ""
    index, walked_list = target.elts[0], call.args[0]
    if not isinstance(walked_list, ast.Attribute) or receiver is None or dotted_name(walked_list.value) != receiver:
        return "", ""
    if walked_list.attr not in sized or not isinstance(index, ast.Name):
        return "", ""
    if any(index.id in bound_names(s) for s in loop.body):
        return "", ""
    return index.id, f"len({ast.unparse(walked_list)})"


@attrs.frozen
class RangeLoop:
    """``for i in range(n)``: ``index`` the target's name, ``count`` the one argument as written (no keywords)."""

    loop: ast.For
    index: str
    count: ast.expr

    @property
    def named(self) -> str:
        """The count's name ("": not a name)."""
        return self.count.id if isinstance(self.count, ast.Name) else ""

    @property
    def constant(self) -> int | None:
        """The count, an integer constant (None: not one)."""
        count = self.count
        return count.value if isinstance(count, ast.Constant) and type(count.value) is int else None

    def index_kept(self) -> bool:
        """The body binds the index nowhere (it counts the iterations)."""
        return not any(self.index in bound_names(s) for s in self.loop.body)

    def count_kept(self) -> bool:
        """The count is a constant, or a name the body does not bind."""
        named = self.named and not any(self.named in bound_names(s) for s in self.loop.body)
        return self.constant is not None or bool(named)

    def a_length(self, statements: Iterable[ast.stmt]) -> bool:
        """The count is a constant, or a name that only ``n = len(...)`` outside the loop binds (``statements``:
        the function's)."""
        if self.constant is not None or not self.named:
            return self.constant is not None
        binders = [s for s in statements if self.named in bound_names(s)]
        inside = {id(n) for n in walked_of(self.loop, ast.stmt)}
        return bool(binders) and all(_len_of(s, self.named) and id(s) not in inside for s in binders)

    def bound_once(self, fn: _Function) -> bool:
        """The count is a name holding one value from before the loop to the function's end: a parameter never
        bound again, or a local bound once, by a plain assignment of the function's body before the loop."""
        name = self.named
        params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        stores = [n for n in walked_of(fn, ast.Name) if n.id == name and not isinstance(n.ctx, ast.Load)]
        if not name or name in params:
            return bool(name) and not stores
        top = [s for s in fn.body if any(n in walked(s) for n in stores)]
        simple = len(stores) == 1 and len(top) == 1 and isinstance(top[0], ast.Assign)
        return simple and self.loop in fn.body and fn.body.index(top[0]) < fn.body.index(self.loop)


def range_loop(loop: ast.AST) -> RangeLoop | None:
    """``for i in range(n)``: a plain name as target, ``range`` called by that name with one positional argument
    (None otherwise; whether ``range`` is rebound, and the ``else``, are the caller's to ask)."""
    if not isinstance(loop, ast.For) or not isinstance(loop.target, ast.Name):
        return None
    call = loop.iter
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "range"):
        return None
    if len(call.args) != 1 or call.keywords:
        return None
    return RangeLoop(loop=loop, index=loop.target.id, count=call.args[0])


def _len_of(stmt: ast.stmt, name: str) -> bool:
    """``name = len(...)``."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    value = stmt.value
    is_len = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "len"
    return stmt.targets[0].id == name and is_len
