"""Which locals of a function certainly hold a list or dict that only the function reaches.

``item_stores.py`` lets a store into such a container's item (``xs[i] = self.side(...)``) bind a stream call's result
as ``y = ...`` binds a name; that holds only where every binding of ``xs`` makes a new list or dict (a display, a
comprehension, ``[...] * n``, ``list(...)``, ``dict(...)``; a parameter annotated ``list[...]``/``dict[...]``) and
the function reads it only as ``xs[...]``, ``len(xs)``, an argument of a torch function or in a ``return``: no alias,
no other call, no closure can reach its items behind the analysis' back.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import binding_name, scope_nodes

__all__ = ["own_containers"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_MAKERS = frozenset({"list", "dict"})
_ANNOTATIONS = frozenset({"list", "dict", "List", "Dict"})


def own_containers(fn: _Function) -> frozenset[str]:
    """The names of ``fn`` that certainly hold a list or dict only ``fn`` reaches."""
    if not _may_hold(fn):
        return frozenset()
    if walked_of(fn, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)):
        return frozenset()
    made = _made_containers(fn)
    return frozenset(name for name in made if _private(fn, name))


def _may_hold(fn: _Function) -> bool:
    """A cheap first look: ``fn`` makes a list or dict somewhere, or has a parameter annotated as one (most
    functions do neither, and need no walk of their bindings)."""
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    if any(_annotated(p.annotation) for p in params):
        return True
    return any(_container(n) for n in walked_of(fn, _MAKING))  # the kinds ``_container`` takes


def _made_containers(fn: _Function) -> set[str]:
    """The names every binding in ``fn`` (a parameter by its annotation) makes a list or dict: an assignment's
    plain target whose value is one; any other binding (a tuple's element, a loop target, ``with ... as``, an
    augmented target, a walrus, ``del``, a definition, an import, ``except ... as``, a capture) is not."""
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    made = {p.arg: _annotated(p.annotation) for p in params}
    plain: set[int] = set()  # the targets judged by their assignment's value
    for node in scope_nodes(fn)[1:]:  # parents come before their children
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in (t for t in targets if isinstance(t, ast.Name)):
                made[target.id] = made.get(target.id, True) and _container(node.value)
                plain.add(id(target))
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in plain:
            made[node.id] = False
        elif (name := binding_name(node)) is not None:
            made[name] = False
    return {name for name, sure in made.items() if sure}


_MAKING = (ast.List, ast.Dict, ast.ListComp, ast.DictComp, ast.BinOp, ast.Call)


def _container(value: ast.expr) -> bool:
    """``value`` surely makes a new list or dict."""
    if isinstance(value, (ast.List, ast.Dict, ast.ListComp, ast.DictComp)):
        return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return isinstance(value.left, ast.List) or isinstance(value.right, ast.List)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _MAKERS


def _annotated(annotation: ast.expr | None) -> bool:
    """A parameter annotated as a list or dict (``list[torch.Tensor]``, ``dict[str, Tensor]``, ``List``)."""
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    if isinstance(annotation, ast.Attribute):  # ``typing.List``
        return annotation.attr in _ANNOTATIONS
    return isinstance(annotation, ast.Name) and annotation.id in _ANNOTATIONS


def _private(fn: _Function, name: str) -> bool:
    """``fn`` reads ``name`` only as ``name[...]``, ``len(name)``, an argument of a torch function or a value it
    returns, and no nested scope names it: no other name, object or call can reach the container."""
    held = {id(n.value) for n in walked_of(fn, ast.Subscript)}
    held |= {id(c.args[0]) for c in walked_of(fn, ast.Call) if _is_len(c)}
    held |= {id(a) for c in walked_of(fn, ast.Call) if _torch_function(c.func) for a in c.args}
    for ret in walked_of(fn, ast.Return):
        held |= {id(e) for e in _returned(ret.value)}
    own = {id(n) for n in scope_nodes(fn)}  # a name inside a nested definition or lambda is not
    for node in walked_of(fn, ast.Name):
        if node.id == name and (id(node) not in own or (isinstance(node.ctx, ast.Load) and id(node) not in held)):
            return False
    return True


def _torch_function(func: ast.expr) -> bool:
    """A function of torch (``torch.cat``, ``torch.stack``): it reads the list's items and keeps no reference."""
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id == "torch"


def _is_len(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == "len" and len(call.args) == 1 and not call.keywords


def _returned(value: ast.expr | None) -> list[ast.expr]:
    """The expressions a ``return`` hands back whole: the value, or the elements of its tuple display."""
    if isinstance(value, ast.Tuple):
        return list(value.elts)
    return [value] if value is not None else []
