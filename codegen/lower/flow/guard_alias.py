"""Two guards spelled differently that hold one value: ``self.multistream`` and ``self.shared.multistream``.

A layer passes its flag to the submodule it builds (``self.multistream = multistream`` and
``self.shared = Shared(..., multistream)``, whose ``__init__`` stores ``self.multistream = multistream``);
a call of the layer's and a call of the submodule's then fork on the same paths, and a result one hands the
other on one stream needs no join. The planner compares guards by a key (``guard_keys.guard_key``); this
module gives both spellings one key, when the module shows it: each attribute is stored once, in its
class's ``__init__``, straight from a constructor parameter, no other statement of either class stores
to it, and the layer passes that very parameter, unchanged, to the submodule's. Anything else keeps its
own spelling (two keys: the planner joins, which is always safe). Like the planner's other guard facts, it
assumes that code outside the module does not store to these attributes.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.walked import walked, walked_of

__all__ = ["guard_aliases", "init_params", "passed_names", "stored_params"]


def guard_aliases(tree: ast.Module, owner: str, receiver: str | None) -> dict[str, str]:
    """For the methods of class ``owner``: ``receiver.sub.attr`` -> ``receiver.attr`` where both hold one
    constructor argument of ``owner``."""
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    cls = classes.get(owner)
    if cls is None or receiver is None:
        return {}
    by_param = {param: attr for attr, param in stored_params(cls).items()}
    found: dict[str, str] = {}
    for sub, call in _built(cls).items():
        made = classes.get(scan.dotted_name(call.func) or "")
        if made is not None:
            found |= {f"{receiver}.{sub}.{a}": f"{receiver}.{own}" for a, own in _shared(call, made, by_param).items()}
    return found


def _shared(call: ast.Call, made: ast.ClassDef, by_param: dict[str, str]) -> dict[str, str]:
    """The attributes of the submodule ``call`` builds (of class ``made``) that store a constructor argument of the
    owner, with the owner's attribute that stores it too (``by_param``: the owner's, by its parameter)."""
    passed = passed_names(call, init_params(made))
    shared: dict[str, str] = {}
    for attr, param in stored_params(made).items():
        source = passed.get(param)
        if source in by_param:
            shared[attr] = by_param[source]
    return shared


def _init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    return next((f for f in scan.functions_of(cls) if f.name == "__init__"), None)  # type: ignore[return-value]


def init_params(cls: ast.ClassDef) -> list[str]:
    init = _init(cls)
    return [a.arg for a in [*init.args.posonlyargs, *init.args.args][1:]] if init is not None else []


def stored_params(cls: ast.ClassDef) -> dict[str, str]:
    """``self.attr = param`` in ``__init__`` (also in a tuple assignment): {attr: param}, for attributes no other
    statement of the class stores to."""
    init = _init(cls)
    if init is None:
        return {}
    rebound = {n.id for n in walked_of(init, ast.Name) if isinstance(n.ctx, ast.Store)}
    params = set(init_params(cls)) - rebound  # a parameter assigned again holds another value after that
    found: dict[str, str] = {}
    for stmt in walked_of(init, ast.Assign):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            for target, value in _pairs(stmt.targets[0], stmt.value):
                if _self_attr(target) and isinstance(value, ast.Name) and value.id in params:
                    found[target.attr] = value.id  # type: ignore[attr-defined]
    stores = [t for node in walked(cls) for t in _stored(node)]
    return {attr: param for attr, param in found.items() if stores.count(attr) == 1}


def _pairs(target: ast.expr, value: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return list(zip(target.elts, value.elts))
    return [(target, value)]


def _stored(node: ast.AST) -> list[str]:
    """The attributes of ``self`` a statement stores to (each target, tuples unpacked)."""
    targets = [e for t in scan.assignment_targets(node) for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    return [t.attr for t in targets if _self_attr(t)]  # type: ignore[attr-defined]


def _self_attr(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"


def _built(cls: ast.ClassDef) -> dict[str, ast.Call]:
    """``self.sub = Class(...)`` in ``__init__``: {sub: the call}; not a call of a name ``__init__`` binds itself
    (``def __init__(self, m, Shared=Other)``: ``Shared(m)`` is whatever the caller hands, not the module's class)."""
    init = _init(cls)
    own = scan.own_names(init) if init is not None else frozenset()
    found: dict[str, ast.Call] = {}
    for stmt in walked_of(init, ast.Assign) if init is not None else ():
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Call):
            called = scan.dotted_name(stmt.value.func) or ""
            if _self_attr(stmt.targets[0]) and called.partition(".")[0] not in own:
                found[stmt.targets[0].attr] = stmt.value  # type: ignore[attr-defined]
    return found


def passed_names(call: ast.Call, params: list[str]) -> dict[str, str]:
    """The callee's parameters bound to a bare name of the caller: {parameter: that name}."""
    bound = dict(zip(params, call.args)) if not any(isinstance(a, ast.Starred) for a in call.args) else {}
    bound.update({k.arg: k.value for k in call.keywords if k.arg is not None})
    return {param: value.id for param, value in bound.items() if isinstance(value, ast.Name)}
