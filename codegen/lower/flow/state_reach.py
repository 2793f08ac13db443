"""Whether a caller reaches the objects a stream call reads through its own state otherwise than by a local.

The combine of vllm_qwen3_dbo reads the dispatcher at ``self.experts.token_dispatchers[i]``; its caller holds that
list in a local (``token_dispatchers = self.experts.token_dispatchers``), which waits for the call at its next
use (``caller_sites.py``). Other uses of ``self.experts`` on the caller's stream (``self.experts.grouped_mlp(...)``,
the next micro-batch's routed experts) may reach the dispatchers too, and would have to wait for the call as well
(a write in place of a tensor the call reads), unless what they run cannot reach them: a call of a method of the
submodule's class (in any file the run holds) whose body names none of its object lists (``token_dispatchers``,
``codegen/index/elements.py``), calls nothing through its own object and passes the object nowhere. Otherwise the
caller's next use of ``self.experts`` waits for the call (race-free, less overlap).
"""

from __future__ import annotations

import ast
from typing import Any

from codegen.index import scan
from codegen.index.elements import element_classes
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.exprs import chain_root
from codegen.lower.flow.object_chains import Here, held_class

__all__ = ["reached_apart"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def reached_apart(index: Any, here: Here, fn: _Function, receiver: str, attribute: str) -> bool:
    """Every use of ``receiver.attribute`` in ``fn`` binds a local to (a part of) it, or calls a method of its
    class that reaches none of the object lists of that class (``"*"``, any attribute: never)."""
    if attribute == "*":
        return False
    owner = next((c for c in here[1].body if isinstance(c, ast.ClassDef) and fn in c.body), None)
    found = held_class(index, here, (here[0], owner), attribute) if owner is not None else None
    bound = {id(s.value) for s in walked_of(fn, ast.Assign) if len(s.targets) == 1}
    for node in walked_of(fn, ast.Call):
        if _on(node.func, receiver, attribute):
            if found is None or not _apart(found[1], node.func.attr):  # type: ignore[attr-defined]
                return False
    calls = {id(n.func.value) for n in walked_of(fn, ast.Call) if _on(n.func, receiver, attribute)}  # type: ignore[attr-defined]
    uses = [n for n in walked(fn) if _is(n, receiver, attribute) and id(n) not in calls]
    parents = {id(c): p for p in walked(fn) for c in ast.iter_child_nodes(p)} if uses else {}
    return all(_bound_through(n, parents, bound) for n in uses)


def _apart(cls: ast.ClassDef, method: str) -> bool:
    """``method`` of ``cls`` reaches none of its object lists, calls none of its methods, passes itself nowhere."""
    fn = next((f for f in scan.functions_of(cls) if f.name == method), None)
    if fn is None or not fn.args.args:
        return False
    me, lists = fn.args.args[0].arg, set(element_classes(cls))
    for node in walked(fn):
        if isinstance(node, ast.Name) and node.id == me and not _attribute_base(node, fn):
            return False
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me:
            if node.attr in lists:
                return False
        if isinstance(node, ast.Call) and chain_root(node.func) == me:
            return False  # a method of its own, or of one of its submodules: not followed
    return True


def _bound_through(node: ast.AST, parents: dict[int, ast.AST], bound: set[int]) -> bool:
    """``node`` (``self.experts``) is the start of a chain of attributes a plain assignment binds to a local
    (``parents``: each node's of the function, by id)."""
    top: ast.AST = node
    while isinstance(parents.get(id(top)), (ast.Attribute, ast.Subscript)) and parents[id(top)].value is top:  # type: ignore[attr-defined]
        top = parents[id(top)]
    return id(top) in bound


def _attribute_base(node: ast.Name, fn: _Function) -> bool:
    return any(a.value is node for a in walked_of(fn, ast.Attribute))


def _is(node: ast.AST, receiver: str, attribute: str) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == attribute
        and isinstance(node.value, ast.Name)
        and node.value.id == receiver
    )


def _on(func: ast.expr, receiver: str, attribute: str) -> bool:
    """``receiver.attribute.m``: a method of the submodule."""
    return isinstance(func, ast.Attribute) and _is(func.value, receiver, attribute)
