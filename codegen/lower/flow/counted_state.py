"""Arguments that are a part of the caller's object reached by integer counts: state that lives on, made by no op.

``self.stage(self.layers[0].qweight)`` hands the callee a parameter of the object: the arguments' reading
(``arguments.py``) takes such a chain of attributes and constant indexes for the module's own state, which is never
kept alive and forks nothing by itself (what the caller's stream writes of it since the stream's last fork does:
``written_state.py``). ``self.layers[i + 1].qweight`` in ``for i in range(n)`` is the same kind of value, but its
index computes ``i + 1``, so it was bound to a fresh name before the call (``qweight_1 = ...``), and that name,
bound by the caller's stream, forked the staging and was kept for it in every iteration: three sync calls per layer
that ``nxt = self.layers[i + 1]`` then ``self.stage(nxt.qweight)`` did without. An index is counted when it is an
integer for certain: a constant, a loop counter (the target of ``for i in range(...)`` or the index of ``for i, _ in
enumerate(...)``, bound nowhere else in the function, no parameter), ``len`` of the object's state, or arithmetic of
those. Python computes it on the host; no stream runs anything to reach the value. GE's reading of what a call was
given (``ge_given.py``) takes the same counts and parts of the state, and also a comparison of counts and a choice
between such parts (``self.layers[i + 1] if i + 1 < len(self.layers) else None``): ``counted(tests=True)``,
``state_part(choices=True)``.
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.walked import walked_of
from codegen.lower.flow.sites import Site

__all__ = ["counted", "counted_args", "counted_state", "counter", "loop_counts", "state_part"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LOOPS = (ast.For, ast.AsyncFor)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)  # integers stay integers


def counted_args(site: Site, receiver: str | None, counts: frozenset[str]) -> Site:
    """``site`` without the arguments that are counted parts of the caller's object (nothing to keep or bind)."""
    kept = tuple(a for a in site.args if not counted_state(a.node, receiver, counts))
    return attrs.evolve(site, args=kept) if len(kept) < len(site.args) else site


def loop_counts(fn: _Function) -> frozenset[str]:
    """The names ``fn`` binds only as the counter of a ``range`` or ``enumerate`` loop: integers."""
    loops = [s for s in walked_of(fn, ast.stmt) if isinstance(s, _LOOPS)]
    targets = {id(t): t.id for t in map(counter, loops) if t is not None}
    params = {a.arg for a in walked_of(fn.args, ast.arg)}
    return frozenset(set(targets.values()) - _others(fn, set(targets)) - params)


def counted_state(node: ast.expr, receiver: str | None, counts: frozenset[str]) -> bool:
    """``node`` is a chain of attributes and counted indexes rooted at ``receiver`` with at least one index
    that is not a constant (those already count as state: ``arguments.py``)."""
    found = False
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript):
            if not counted(node.slice, receiver, counts):
                return False
            found = found or not isinstance(node.slice, ast.Constant)
        node = node.value
    return found and receiver is not None and isinstance(node, ast.Name) and node.id == receiver


def counted(node: ast.expr, receiver: str | None, counts: frozenset[str], *, tests: bool = False) -> bool:
    """An integer for certain: a constant, a counter, ``len`` of a part of the object's state (``state_part``),
    arithmetic of those; with ``tests``, also a comparison of those (``i + 1 < len(self.layers)``: a bool that GE's
    choices of a part of the state test, ``ge_given.py``). Python computes it on the host: no op makes it."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return node.id in counts
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        return counted(node.left, receiver, counts, tests=tests) and counted(node.right, receiver, counts, tests=tests)
    if tests and isinstance(node, ast.Compare):
        return all(counted(n, receiver, counts, tests=tests) for n in (node.left, *node.comparators))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" and not node.keywords:
        return len(node.args) == 1 and state_part(node.args[0], receiver, counts, choices=tests)
    return False


def state_part(node: ast.expr, receiver: str | None, counts: frozenset[str], *, choices: bool = False) -> bool:
    """A part of the object's state: ``self``, ``self.a.b``, ``self.layers[i + 1]`` (counted indexes); with
    ``choices``, also such a part or ``None`` on either side of an ``if`` whose test is counted
    (``self.layers[i + 1] if i + 1 < len(self.layers) else None``)."""
    if choices and isinstance(node, ast.IfExp):
        sides = (node.body, node.orelse)
        return counted(node.test, receiver, counts, tests=True) and all(
            state_part(s, receiver, counts, choices=True) or (isinstance(s, ast.Constant) and s.value is None)
            for s in sides
        )
    if isinstance(node, ast.Subscript):
        return state_part(node.value, receiver, counts, choices=choices) and counted(
            node.slice, receiver, counts, tests=choices
        )
    if isinstance(node, ast.Attribute):
        return state_part(node.value, receiver, counts, choices=choices)
    return receiver is not None and isinstance(node, ast.Name) and node.id == receiver


def counter(loop: ast.For | ast.AsyncFor) -> ast.Name | None:
    """The counter ``loop`` binds: ``i`` of ``for i in range(...)`` or ``for i, _ in enumerate(...)``."""
    func = loop.iter.func if isinstance(loop.iter, ast.Call) else None
    name = func.id if isinstance(func, ast.Name) else None
    target = loop.target
    if name == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
        target = target.elts[0]
    elif name != "range":
        return None
    return target if isinstance(target, ast.Name) else None


def _others(fn: _Function, counters: set[int]) -> set[str]:
    """The names ``fn`` binds or deletes anywhere but as a loop's counter (``counters``: those targets, by id)."""
    names = {n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load) and id(n) not in counters}
    caught: tuple[ast.ExceptHandler | ast.MatchAs | ast.MatchStar, ...] = walked_of(
        fn, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)
    )
    handlers = {h.name for h in caught if h.name}
    imported = {(a.asname or a.name).split(".")[0] for a in walked_of(fn, ast.alias)}
    declared = {n for s in walked_of(fn, ast.stmt) if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
    defined = {s.name for s in walked_of(fn, ast.stmt) if isinstance(s, (*_DEFS, ast.ClassDef)) and s is not fn}
    return names | handlers | imported | declared | defined
