"""A guard read through a layer loop's target that every layer holds equal: ``decode_layer.use_stream1``.

cann-recipes-infer's DeepSeek-R1 prefill calls ``decode_layer.forward_combine_double_routing(...)`` (``when=
"self.use_stream1"``) in ``for layer_id, decode_layer in enumerate(self.layers)``: the guard is read on another
object in every iteration, so the planner took it to change between two calls and joined the previous layer's
combine before forking the next one (a call that does not fork would leave the earlier one unjoined). But the
model builds every layer with one value: ``nn.ModuleList(DeepseekV3DecoderLayer(i, ..., multi_stream) for i in
...)``, and the layer's ``__init__`` stores ``self.use_stream1 = use_stream1`` once (``guard_alias.stored_params``).
Such a guard gets one key for every layer, ``self.layers[*].use_stream1``: its calls fork on the same paths.

It holds when the layer list is made of one class (``codegen/index/elements.py``) whose ``__init__`` stores the
attribute once, straight from a parameter, and nothing else in the class or its bases in the run stores it; when
every element is built passing that parameter the same name: a parameter of the owner's ``__init__`` that it never
rebinds, not a variable of the comprehension; when the owner stores that attribute of no object (``self.layers[0].on =
False``) and calls no ``setattr``; and when the loop's target names only elements of that list
(``loop_targets.py``). As with ``guard_alias.py``, code outside the run is assumed not to store to the attribute.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.class_chain import bases_of, class_of, home_of
from codegen.index.paths import dotted_name
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.guard_alias import init_params, passed_names, stored_params
from codegen.lower.flow.loop_targets import element_targets

__all__ = ["uniform_guards"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def uniform_guards(tree: ast.Module, index: object, module: str, qualname: str, fn: _Function) -> dict[str, str]:
    """{``target.attr``: its key} for the attributes that every element of a layer list ``fn`` loops over holds
    equal (``qualname``: ``fn``'s, a method of a class of ``tree``, the module ``module`` of the run)."""
    owner = next((c for c in tree.body if isinstance(c, ast.ClassDef) and c.name == qualname.split(".")[0]), None)
    receiver = fn.args.args[0].arg if fn.args.args and "." in qualname else None
    if owner is None or receiver is None:
        return {}
    lists = getattr(index, "elements", {}).get(f"{module}:{owner.name}", {})
    targets = element_targets(fn, receiver, lists)
    found: dict[str, str] = {}
    for loop in walked_of(fn, ast.For):
        walked_list, target = _walked(loop)
        if target in targets and walked_list is not None and walked_list.startswith(f"{receiver}."):
            attr = walked_list.removeprefix(f"{receiver}.")
            for held in _uniform(index, module, owner, attr, targets[target]):
                found[f"{target}.{held}"] = f"{receiver}.{attr}[*].{held}"
    return found


def _walked(loop: ast.For) -> tuple[str | None, str | None]:
    """(the list, the target) of ``for x in self.layers`` / ``for i, x in enumerate(self.layers)``."""
    it, target = loop.iter, loop.target
    if isinstance(it, ast.Call) and dotted_name(it.func) == "enumerate" and len(it.args) == 1:
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return None, None
        it, target = it.args[0], target.elts[1]
    name = target.id if isinstance(target, ast.Name) else None
    return (dotted_name(it) if isinstance(it, ast.Attribute) else None), name


def _uniform(index: object, module: str, owner: ast.ClassDef, attr: str, made: str) -> list[str]:
    """The attributes of class ``made`` that every element of ``owner``'s list ``attr`` holds equal."""
    home = home_of(index, module, made)
    cls = class_of(index, *home) if home is not None else None
    calls = _element_calls(owner, attr, made)
    if cls is None or not calls:
        return []
    params, stored = init_params(cls), stored_params(cls)
    same = [_same_name(owner, call, params) for call in calls]
    held = [a for a, p in stored.items() if same[0].get(p) is not None and all(s.get(p) == same[0][p] for s in same)]
    held = [a for a in held if not _stored_in(owner, a)]
    return [a for a in held if not _stored_by_bases(index, home[0], cls, a)]  # type: ignore[index]


def _stored_in(owner: ast.ClassDef, attr: str) -> bool:
    """The owner may change an element's attribute (``self.layers[0].on = False``, any ``setattr``)."""
    targets = [t for n in walked(owner) for t in scan.assignment_targets(n)]
    if any(isinstance(t, ast.Attribute) and t.attr == attr and dotted_name(t) != f"self.{attr}" for t in targets):
        return True
    return any(isinstance(n, ast.Call) and dotted_name(n.func) == "setattr" for n in walked(owner))


def _element_calls(owner: ast.ClassDef, attr: str, made: str) -> list[ast.Call]:
    """The calls of ``made`` that build the elements of ``self.<attr>`` in ``owner.__init__`` (its one store)."""
    init = next((f for f in scan.functions_of(owner) if f.name == "__init__"), None)
    stores = [n for n in walked_of(init, ast.Assign) if _stores_self(n, attr)] if init is not None else []
    if len(stores) != 1:
        return []
    return [n for n in walked(stores[0].value) if isinstance(n, ast.Call) and dotted_name(n.func) == made]


def _stores_self(node: ast.Assign, attr: str) -> bool:
    return any(dotted_name(t) == f"self.{attr}" for t in node.targets if isinstance(t, ast.Attribute))


def _same_name(owner: ast.ClassDef, call: ast.Call, params: list[str]) -> dict[str, str]:
    """The parameters ``call`` binds to a parameter of ``owner.__init__`` that nothing there binds again (one
    value for every element the call builds)."""
    init = next((f for f in scan.functions_of(owner) if f.name == "__init__"), None)
    if init is None:
        return {}
    rebound = {n.id for n in walked_of(init, ast.Name) if not isinstance(n.ctx, ast.Load)}
    fixed = set(init_params(owner)) - rebound
    return {p: name for p, name in passed_names(call, params).items() if name in fixed}


def _stored_by_bases(index: object, module: str, cls: ast.ClassDef, attr: str, depth: int = 8) -> bool:
    """A base class of ``cls`` may store ``self.<attr>`` (one the run does not hold: it may)."""
    for home in bases_of(index, module, cls):
        base = class_of(index, *home) if home is not None else None
        if base is None or depth == 0:
            return True
        stores = [t for n in walked(base) for t in scan.assignment_targets(n)]
        if any(dotted_name(t) == f"self.{attr}" for t in stores if isinstance(t, ast.Attribute)):
            return True
        if _stored_by_bases(index, home[0], base, attr, depth - 1):  # type: ignore[index]
            return True
    return False
