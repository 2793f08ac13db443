"""Which of a caller's locals hold a list of distinct objects: a write to one item's state touches no other item.

vllm_qwen3_dbo keeps one dispatcher per micro-batch, ``self.token_dispatchers = [TokenDispatcher(experts, top_k)
for _ in range(micro_batches)]``, and its layer fills micro-batch ``i``'s dispatcher (``token_dispatchers[i]
.preprocess_and_permtute1(...)``) while micro-batch ``i - 1``'s dispatch still reads its own on the communication
stream. Those are two objects, as ``self.a`` and ``self.b`` are two submodules: the dataflow knows it where the list
is built. A local holds such a list when the function binds it once, outside loops and before any use, to

- ``self.<submodule>...<attr>``, a list attribute whose class's ``__init__`` stores only lists built of one class
  there and no method of that class grows it or replaces an item (``codegen/index/elements.py``), or
- a list built in the function itself,

and every other mention of the local is an item read (``xs[k]``): the function neither stores an item, nor passes
the list on, nor calls a method of it. A list is built of distinct objects when it is a comprehension, a
``nn.ModuleList`` of one, or a list display, whose every element is a call of a class the run reads (not a factory,
no ``__new__`` of its own: each call makes a new object) given no tensor (constants, the comprehension's ``range``
variable, parameters annotated ``int``, ``float``, ``bool`` or ``str``), so no two items start out sharing memory.
Premise: code outside the class that builds such a list attribute never puts an object already in it back in.
"""

from __future__ import annotations

import ast
from typing import Any

from codegen.index import scan
from codegen.index.elements import element_classes
from codegen.index.walked import walked_of
from codegen.lower.flow.object_chains import Here, class_named, held_class

__all__ = ["distinct_lists"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_LISTS = frozenset({"nn.ModuleList", "torch.nn.ModuleList", "ModuleList", "list"})
_PLAIN = frozenset({"int", "float", "bool", "str", "None"})


def distinct_lists(index: Any, here: Here, method: str | None, fn: _Function) -> frozenset[str]:
    """The locals of ``fn`` (the method ``Class.name`` of ``here``, or a function) bound once to a list of
    distinct objects and only read as items."""
    owner = method.rpartition(".")[0] or None if method else None
    found: set[str] = set()
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name = stmt.targets[0].id
            if _only_items(fn, name, stmt) and _distinct(index, here, owner, fn, stmt.value):
                found.add(name)
    return frozenset(found) | _chains(index, here, owner, fn)


def _chains(index: Any, here: Here, owner: str | None, fn: _Function) -> set[str]:
    """The list attributes ``fn`` reads without a local (``self.sub.attr[i]``): every mention of the chain in ``fn``
    an item read, the list built of distinct objects (``_attribute_list``)."""
    items = [n for n in walked_of(fn, ast.Subscript) if isinstance(n.ctx, ast.Load)]
    chains = {c: n.value for n in items if (c := scan.dotted_name(n.value)) and "." in c}
    found = set()
    for chain, node in chains.items():
        if _chain_items_only(fn, chain, items) and _attribute_list(index, here, owner, fn, node):  # type: ignore[arg-type]
            found.add(chain)
    return found


def _chain_items_only(fn: _Function, chain: str, items: list[ast.Subscript]) -> bool:
    """Every mention of the attribute chain ``chain`` in ``fn`` (and of any chain it starts) is an item read."""
    read = {id(n.value) for n in items}
    parts = chain.split(".")
    starts = {".".join(parts[:k]) for k in range(2, len(parts) + 1)}
    mentions = [n for n in walked_of(fn, ast.Attribute) if scan.dotted_name(n) in starts]
    tops = [n for n in mentions if scan.dotted_name(n) == chain]
    inner = {id(a) for n in tops for a in walked_of(n, ast.Attribute)}
    return all(id(n) in read for n in tops) and all(id(n) in inner for n in mentions)


def _only_items(fn: _Function, name: str, binding: ast.Assign) -> bool:
    """``name`` is bound by ``binding`` alone, and every other mention of it reads an item (``name[k]``)."""
    items = {id(n.value) for n in walked_of(fn, ast.Subscript) if isinstance(n.ctx, ast.Load)}
    mentions = [n for n in walked_of(fn, ast.Name) if n.id == name and n is not binding.targets[0]]
    after = all(n.lineno > binding.lineno for n in mentions)
    return after and all(isinstance(n.ctx, ast.Load) and id(n) in items for n in mentions)


def _distinct(index: Any, here: Here, owner: str | None, fn: _Function, value: ast.expr) -> bool:
    """``value`` is a list of distinct objects: built here, or a list attribute reached from ``self``."""
    if isinstance(value, ast.Attribute):
        return _attribute_list(index, here, owner, fn, value)
    return _built(index, here, here[0], fn, value)


def _attribute_list(index: Any, here: Here, owner: str | None, fn: _Function, value: ast.Attribute) -> bool:
    """``self.sub.attr``: ``attr`` a list of one class in the ``__init__`` of ``sub``'s class, built of distinct
    objects there."""
    path = (scan.dotted_name(value) or "").split(".")
    receiver = fn.args.args[0].arg if fn.args.args else None
    found = class_named(index, here, here[0], owner) if owner and path[0] == receiver else None
    for attr in path[1:-1]:
        found = held_class(index, here, found, attr) if found else None
    if found is None or path[-1] not in element_classes(found[1]):
        return False
    init = next((f for f in scan.functions_of(found[1]) if f.name == "__init__"), None)
    stores = [s for s in walked_of(init, ast.Assign) if _stores_attr(s, path[-1])] if init else []
    return bool(stores) and all(_built(index, here, found[0], init, s.value) for s in stores)  # type: ignore[arg-type]


def _stores_attr(stmt: ast.Assign, attr: str) -> bool:
    return any(scan.is_self_attr(t) and t.attr == attr for t in stmt.targets)


def _built(index: Any, here: Here, module: str, fn: _Function, value: ast.expr) -> bool:
    """``value`` builds a list whose every element is a new object of a class of the run, given no tensor."""
    if isinstance(value, ast.Call) and scan.dotted_name(value.func) in _LISTS and len(value.args) == 1:
        return not value.keywords and _built(index, here, module, fn, value.args[0])
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        ranged = all(_over_range(g) for g in value.generators)
        counters = {n.id for g in value.generators for n in walked_of(g.target, ast.Name)}
        return ranged and _new_object(index, here, module, fn, value.elt, counters)
    if isinstance(value, ast.List) and value.elts:
        return all(_new_object(index, here, module, fn, e, set()) for e in value.elts)
    return False


def _over_range(generator: ast.comprehension) -> bool:
    it = generator.iter
    ranged = isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
    return ranged and isinstance(generator.target, ast.Name) and not generator.ifs


def _new_object(index: Any, here: Here, module: str, fn: _Function, node: ast.expr, counters: set[str]) -> bool:
    """``node`` calls a class of the run with no ``__new__`` of its own, every argument a non-tensor."""
    if not isinstance(node, ast.Call):
        return False
    found = class_named(index, here, module, scan.dotted_name(node.func) or "")
    if found is None or any(isinstance(f, ast.FunctionDef) and f.name == "__new__" for f in found[1].body):
        return False
    plain = _plain_params(fn)
    values = [*node.args, *(k.value for k in node.keywords)]
    return all(_not_tensor(v, counters | plain) for v in values)


def _not_tensor(node: ast.expr, names: set[str]) -> bool:
    return isinstance(node, ast.Constant) or (isinstance(node, ast.Name) and node.id in names)


def _plain_params(fn: _Function) -> set[str]:
    """The parameters of ``fn`` annotated with a plain type (``int``, ``bool | None``) that it never rebinds."""
    stored = {n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)}
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return {p.arg for p in params if p.annotation is not None and _plain(p.annotation) and p.arg not in stored}


def _plain(annotation: ast.expr) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return all(part.strip() in _PLAIN for part in annotation.value.split("|"))
    names = list(walked_of(annotation, ast.Name))
    shapes = all(isinstance(n, (ast.Name, ast.BinOp, ast.BitOr, ast.Load, ast.Constant)) for n in ast.walk(annotation))
    return bool(names) and shapes and all(n.id in _PLAIN for n in names)
