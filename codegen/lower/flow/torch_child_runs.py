"""Whether a method of torch's module class runs its children: calls the modules its object holds, not the callables
it keeps for bookkeeping.

``Sequential.forward`` is ``for module in self: input = module(input)`` and ``TransformerEncoder.forward`` calls each
of ``self.layers``: a call of either writes what its children's ``forward`` writes (``c`` in the table). A loop that
calls what it iterates is not always that: ``Module._call_impl`` runs the forward hooks (``for hook_id, hook in
self._forward_hooks.items(): hook(self, args, result)``), ``state_dict`` its state-dict hooks, and
``RNNBase._weights_have_changed`` calls the weak references it keeps; reading those as running every child made a
call of them write all the children's state. What the loop iterates says which: torch types it. A loop runs children
where its iterable holds modules, by torch's own annotations or constructors: the object itself where its
class's ``__iter__`` returns an ``Iterator[Module]``; an attribute the class annotates with a module class
(``_modules: dict[str, Optional["Module"]]``, not ``_forward_hooks: dict[int, Callable]``) or that ``__init__``
builds by a module class or by a function of its file returning one (``self.layers = _get_clones(layer, n)``, a
``ModuleList``); a method of such a holder (``self._modules.values()``); or a method of the object returning
modules (``self.children()``: ``Iterator["Module"]``). A module class is one of the package deriving ``Module``.
"""

from __future__ import annotations

import ast

from codegen.index.scan import dotted_name
from codegen.lower.flow.torch_module_sources import TorchClass

__all__ = ["runs_children"]

_DEPTH = 16  # bases followed one inside another at most
_ROOT = "Module"  # torch's base of every module class


def runs_children(classes: dict[str, TorchClass], cls: str, fn: ast.FunctionDef) -> bool:
    """``fn``, a method of ``cls``, calls what a loop over the modules its object holds gives (see above)."""
    own = fn.args.args[0].arg if fn.args.args else ""
    called = {c.func.id for c in ast.walk(fn) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
    loops = [n for n in ast.walk(fn) if isinstance(n, (ast.For, ast.comprehension))]
    return any(_targets(loop.target) & called and _holds_modules(classes, cls, own, loop.iter) for loop in loops)


def _targets(node: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _holds_modules(classes: dict[str, TorchClass], cls: str, own: str, node: ast.expr) -> bool:
    """Iterating ``node`` (in a method of ``cls`` whose object is ``own``) gives modules."""
    if isinstance(node, ast.Name):
        return node.id == own and _returns_modules(classes, cls, "__iter__")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == own:
        return _attribute_modules(classes, cls, node.attr)
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.args:
        return False
    holder = node.func.value
    if isinstance(holder, ast.Name) and holder.id == own:
        return _returns_modules(classes, cls, node.func.attr)
    return _holds_modules(classes, cls, own, holder)


def _returns_modules(classes: dict[str, TorchClass], cls: str, method: str) -> bool:
    """``method`` of ``cls`` (or of a base) is annotated to return modules."""
    found = next((c.methods[method] for c in _chain(classes, cls) if method in c.methods), None)
    return found is not None and found.returns is not None and _names_module(classes, found.returns)


def _attribute_modules(classes: dict[str, TorchClass], cls: str, attr: str) -> bool:
    """``self.<attr>`` holds modules: the class chain annotates it with a module class, or an ``__init__`` builds it
    by a module class or a function of its file returning one."""
    chain = _chain(classes, cls)
    annotated = next((c.annotations[attr] for c in chain if attr in c.annotations), None)
    if annotated is not None:
        return _names_module(classes, annotated)
    built = [
        (c, s.value)
        for c in chain
        if "__init__" in c.methods
        for s in ast.walk(c.methods["__init__"])
        if isinstance(s, ast.Assign) and any(dotted_name(t) == f"{_receiver(c)}.{attr}" for t in s.targets)
    ]
    return bool(built) and all(_makes_module(classes, c, v, 0) for c, v in built)


def _makes_module(classes: dict[str, TorchClass], home: TorchClass, value: ast.expr, depth: int) -> bool:
    """``value`` is a call of a module class, or of a function of ``home``'s file every ``return`` of which is."""
    name = dotted_name(value.func) if isinstance(value, ast.Call) else None
    if name is None or depth > _DEPTH:
        return False
    if _module_class(classes, name.rpartition(".")[2], 0):
        return True
    function = home.file.functions.get(name)
    made = [r.value for r in ast.walk(function) if isinstance(r, ast.Return)] if function is not None else []
    return bool(made) and all(v is not None and _makes_module(classes, home, v, depth + 1) for v in made)


def _names_module(classes: dict[str, TorchClass], annotation: ast.expr) -> bool:
    """The annotation names a module class (``Iterator[Module]``, ``dict[str, Optional["Module"]]``)."""
    for node in ast.walk(annotation):
        name = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else name
        if name is not None and _module_class(classes, name.rpartition(".")[2], 0):
            return True
    return False


def _module_class(classes: dict[str, TorchClass], name: str, depth: int) -> bool:
    """``name`` is a class of the package deriving torch's ``Module`` (or it)."""
    if name == _ROOT:
        return True
    found = classes.get(name)
    return found is not None and depth <= _DEPTH and any(_module_class(classes, b, depth + 1) for b in found.bases)


def _chain(classes: dict[str, TorchClass], cls: str, depth: int = 0) -> list[TorchClass]:
    """``cls`` and its bases among ``classes``, itself first."""
    found = classes.get(cls)
    if found is None or depth > _DEPTH:
        return []
    return [found, *(c for b in found.bases for c in _chain(classes, b, depth + 1))]


def _receiver(cls: TorchClass) -> str:
    init = cls.methods["__init__"]
    return init.args.args[0].arg if init.args.args else ""
