"""Results stored into items of a Python list or dict the caller owns: ``xs[i] = self.side(...)`` binds them.

vllm-ascend's dual-batch overlap keeps each micro-batch's result in a list item
(``hidden_states[i] = self._forward_combine_comm(...)``). When ``xs`` is certainly a Python list or dict
and nothing but ``xs`` itself can reach it, the store only puts a reference in one of its slots, as ``y =
...`` binds a name: the caller can join the call later, before the first statement that reads ``xs`` (any
item: the analysis reads names, not indices). A *container* here is a local of the function that every
binding makes a list or dict (a display, a comprehension, ``[...] * n``, ``list(...)``, ``dict(...)``; a
parameter annotated ``list[...]``/``dict[...]``) and that the function reads only as ``xs[...]``,
``len(xs)``, an argument of a torch function (``torch.cat(xs)``, which keeps no reference) or in a ``return``:
no alias, no other call, no closure can reach its items behind the analysis' back.
Anything else (a store into what may be a tensor, whose item store is a copy kernel) stays a use at once.

Storing into a container's item (``xs[j] = t``) writes no tensor memory: :mod:`~codegen.lower.flow.writes`
asks :func:`item_stored` which store targets of a statement are such slots. The facts of a function are
registered when its calls are searched (:func:`containers`, from ``callsites.py``), before any analysis of it.
"""

from __future__ import annotations

import ast
import weakref

from codegen.index.walked import per_node, walked, walked_of
from codegen.lower.flow.exprs import binding_name, scope_nodes

__all__ = ["container_item", "containers", "item_call", "item_names", "item_stored", "stored_only"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_MAKERS = frozenset({"list", "dict"})
_ANNOTATIONS = frozenset({"list", "dict", "List", "Dict"})
_PURE_INDEX = (ast.Name, ast.Constant, ast.Attribute, ast.BinOp, ast.UnaryOp, ast.Tuple, ast.Slice)

_STORED: weakref.WeakKeyDictionary[ast.stmt, frozenset[str]] = weakref.WeakKeyDictionary()
_ITEMS: weakref.WeakKeyDictionary[ast.Subscript, str] = weakref.WeakKeyDictionary()


@per_node
def containers(fn: _Function) -> frozenset[str]:
    """The names of ``fn`` that certainly hold a list or dict only ``fn`` reaches (registers its item stores)."""
    nodes = walked(fn)
    if not _may_hold(fn, nodes):
        return frozenset()
    if any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)) for n in nodes):
        return frozenset()
    made = _made_containers(fn)
    found = frozenset(name for name in made if _private(fn, name))
    for stmt in walked_of(fn, ast.stmt):
        stored = _item_targets(stmt, found)
        if stored:
            _STORED[stmt] = stored
    for node in walked_of(fn, ast.Subscript):
        if isinstance(node.value, ast.Name) and node.value.id in found:
            _ITEMS[node] = node.value.id
    return found


def _may_hold(fn: _Function, nodes: tuple[ast.AST, ...]) -> bool:
    """A cheap first look: ``fn`` makes a list or dict somewhere, or has a parameter annotated as one (most
    functions do neither, and need no walk of their bindings)."""
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    if any(_annotated(p.annotation) for p in params):
        return True
    return any(isinstance(n, ast.expr) and _container(n) for n in nodes)


def container_item(node: ast.expr) -> bool:
    """``node`` is ``xs[k]`` for a container ``xs`` of its function: an object of its own, not a view of ``xs``."""
    return isinstance(node, ast.Subscript) and node in _ITEMS


def item_stored(stmt: ast.AST) -> frozenset[str]:
    """The containers ``stmt`` stores an item of directly (``xs[i] = t``: no tensor memory is written)."""
    return _STORED.get(stmt, frozenset()) if isinstance(stmt, ast.stmt) else frozenset()


def stored_only(stmt: ast.stmt) -> frozenset[str]:
    """The containers ``stmt`` names only to store an item of (``xs[i] = t``: Python loads ``xs`` to call its
    ``__setitem__``, which reads no item), not in its value, an index or another target."""
    stored = item_stored(stmt)
    if not stored:
        return stored
    slots = {id(n.value) for n in walked_of(stmt, ast.Subscript) if isinstance(n.ctx, ast.Store) and n in _ITEMS}
    named = [n for n in walked_of(stmt, ast.Name) if n.id in stored and id(n) not in slots]
    return stored - {n.id for n in named}


def item_call(stmt: ast.stmt, names: frozenset[str]) -> ast.Call | None:
    """The call an assignment binds to names and items of the containers ``names`` (at least one item), if
    that is all the statement does and no index calls anything."""
    if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Call) or not names:
        return None
    slots = [_slots(target, names) for target in stmt.targets]
    if any(s is None for s in slots) or not any(slots):
        return None
    return stmt.value


def item_names(stmt: ast.stmt) -> frozenset[str]:
    """The containers an assignment of a call's result stores items of (their names hold the result)."""
    return item_stored(stmt)


def _slots(target: ast.expr, names: frozenset[str]) -> int | None:
    """How many container items ``target`` stores (None: it stores something else than names and items)."""
    if isinstance(target, ast.Name):
        return 0
    if isinstance(target, (ast.Tuple, ast.List)):
        found = [_slots(e, names) for e in target.elts]
        return None if any(f is None for f in found) else sum(f or 0 for f in found)
    return 1 if _item_of(target, names) else None


def _item_of(target: ast.expr, names: frozenset[str]) -> str | None:
    """``xs`` when ``target`` is ``xs[k]`` for a container ``xs`` and an index that calls nothing."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
        return None
    pure = all(isinstance(n, (*_PURE_INDEX, ast.operator, ast.unaryop, ast.expr_context)) for n in walked(target.slice))
    return target.value.id if target.value.id in names and pure else None


def _item_targets(stmt: ast.stmt, names: frozenset[str]) -> frozenset[str]:
    """The containers whose items ``stmt`` stores directly (plain, unpacked or chained targets), but those it
    also writes through an item (``xs[0][1] = t`` writes the tensor ``xs[0]``)."""
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or not names:
        return frozenset()
    targets: list[ast.expr] = list(stmt.targets) if isinstance(stmt, ast.Assign) else [stmt.target]
    direct: set[str] = set()
    deeper: set[str] = set()
    while targets:
        target = targets.pop()
        if isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            targets.extend(target.elts if not isinstance(target, ast.Starred) else [target.value])
        elif (name := _item_of(target, names)) is not None:
            direct.add(name)
        else:
            deeper |= {n.id for n in walked_of(target, ast.Name)}
    return frozenset(direct - deeper)


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
