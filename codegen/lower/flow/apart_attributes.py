"""Which attributes of a submodule the run tells apart: where a body's read of ``self.a.y`` may be named ``a.y``.

``body_reads.py`` names what a side body reads of its object by whole chains (``self.a.y``), so the caller's write of
the sibling ``self.a.x`` does not wait for the side call. That holds only where ``x`` and ``y`` are two memories.
``Pair.__init__`` storing ``self.y = self.x`` (or a view of it, or one parameter on both, ``nn.Parameter(t)``)
makes them one: the caller's ``self.a.x.add_(1)`` then wrote what the side stream still read (the race checker
reported it). So a read under ``self.a`` is named by its path only where the run can tell the path apart from every
other: ``__init__`` of the body's class assigns ``self.a`` one class of the same module (``scan.submodule_assignments``)
with no base but ``nn.Module``, no decorator, no store through a computed name, no store whose value reads its own
object, nothing of the body's class storing on ``self.a``'s attributes but new memory; and every store to ``y``
makes new memory: a constant, arithmetic (a new tensor, or a number), or a call that is no view
(``view_roots.view_base``), of no name of the method, given no name of the method (a parameter or a local may be
memory the object got from outside: ``nn.Parameter(t)`` and ``torch.as_tensor(t)`` hand ``t`` on, and no table says
which calls do). Anything else under ``self.a`` is read
whole, and a path is cut at ``a.y`` (what ``y`` holds is told apart one level only). Where two first attributes hold
one object (``self.b = self.a``) the run does not tell them apart either; that is no concern of this reading.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index import scan
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.attribute_stores import Store, object_stores, paired_targets
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.view_roots import alias_root, view_base

__all__ = ["told_apart"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_PLAIN_BASES = frozenset({"nn.Module", "torch.nn.Module", "Module", "object"})


def told_apart(tree: ast.Module, owner: str | None, owned: dict[str, str]) -> dict[str, frozenset[str]]:
    """For each submodule attribute of class ``owner`` (``owned``: attribute -> class name), the attributes of its
    object the run tells apart from all others (see above)."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    outer = classes.get(owner or "")
    if outer is None:
        return {}
    touched = _stored_under(outer)
    found = {a: _fresh_attributes(classes[c]) for a, c in owned.items() if c in classes and a not in touched}
    return {a: parts for a, parts in found.items() if parts}


def _stored_under(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes of ``cls``'s object on whose own attributes a method of ``cls`` stores what may be other memory
    (``self.a.x = self.a.y``, ``self.a.x = t``; not ``self.a.x = h * 2``), or deletes."""
    found: set[str] = set()
    for fn in scan.functions_of(cls):
        receiver = fn.args.args[0].arg if fn.args.args else None
        values = _stored_values(fn)
        for node in walked_of(fn, ast.Attribute):
            below = node.value
            if isinstance(node.ctx, ast.Load) or not (isinstance(below, ast.Attribute) and _is(below.value, receiver)):
                continue
            if isinstance(node.ctx, ast.Del) or not _fresh(values.get(id(node)), fn):
                found.add(below.attr)
    return frozenset(found)


def _stored_values(fn: _Function) -> dict[int, ast.expr | None]:
    """What each plain assignment target of ``fn`` is given (an augmented one: new memory only if it was)."""
    found: dict[int, ast.expr | None] = {}
    for stmt in walked_of(fn, ast.stmt):
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                found.update((id(t), v) for t, v in paired_targets(target, stmt.value))
        elif isinstance(stmt, ast.AugAssign):
            found[id(stmt.target)] = ast.Constant(None)  # written in place: it holds the memory it held
    return found


def _fresh_attributes(cls: ast.ClassDef) -> frozenset[str]:
    """The attributes every store of which makes new memory, in a class that takes no attribute from another."""
    if cls.decorator_list or cls.keywords or any(scan.dotted_name(b) not in _PLAIN_BASES for b in cls.bases):
        return frozenset()
    stores = list(_stores(cls))
    if any(s.attr == "*" or _reads_object(s, fn) for s, fn in stores):
        return frozenset()
    attributes = {s.attr for s, _ in stores}
    stale = {s.attr for s, fn in stores if not s.augmented and not _fresh(s.value, fn)}
    return frozenset(attributes - stale)


def _stores(cls: ast.ClassDef) -> Iterator[tuple[Store, _Function]]:
    for fn in scan.functions_of(cls):
        if fn.args.args:
            yield from ((s, fn) for s in object_stores(fn, fn.args.args[0].arg))


def _reads_object(store: Store, fn: _Function) -> bool:
    """The value stored reads the object itself (``self.y = self.x``: one memory under two names)."""
    receiver = fn.args.args[0].arg
    return store.value is not None and any(_is(n, receiver) for n in walked(store.value))


def _fresh(value: ast.expr | None, fn: _Function) -> bool:
    """``value`` is new memory, or none (see above)."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, (ast.BinOp, ast.UnaryOp)):
        return True  # arithmetic: a new tensor, or a number
    if not isinstance(value, ast.Call) or view_base(value) is not None:
        return False
    local = {a.arg for a in walked_of(fn.args, ast.arg)} | {n for s in walked_of(fn, ast.stmt) for n in bound_names(s)}
    given = [*value.args, *(k.value for k in value.keywords)]
    root = alias_root(value.func)
    return root not in local and not any(alias_root(a) in local for a in given)


def _is(node: ast.AST, name: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == name
