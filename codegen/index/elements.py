"""The class every element of a layer list holds: ``self.layers = nn.ModuleList(Layer(i) for i in ...)``.

A model's forward walks its layers (``for layer in self.layers:``, ``for i, layer in enumerate(self.layers):``)
and calls a method of each (``layer.forward_dispatch(...)``). Such a call reaches a stream function only when
every element of the list is surely an instance of one class; the index records that class per attribute, read
from ``__init__`` the way submodules are (:func:`codegen.index.scan.submodule_assignments`): every store to the
attribute there must make a list (``nn.ModuleList(...)``, a list or tuple display or comprehension) whose every
element is made by that one class, and nothing in the class may add to it or replace an element
(``self.layers.append(x)``, ``self.layers[0] = x``). Anything else leaves the attribute out, and calls through
its elements stay on their caller's stream (race-free, no overlap).
"""

from __future__ import annotations

import ast

from codegen.index.paths import assignment_targets, dotted_name, is_self_attr
from codegen.index.scan import functions_of, own_names, statements_breadth_first
from codegen.index.walked import walked_of

__all__ = ["element_classes"]

_LISTS = ("nn.ModuleList", "torch.nn.ModuleList", "ModuleList", "list", "tuple")
_MUTATORS = ("append", "extend", "insert", "__setitem__")


def element_classes(cls: ast.ClassDef) -> dict[str, str]:
    """{attr: "Layer"} for each ``self.attr`` whose ``__init__`` stores only lists of ``Layer`` instances and
    that the class never grows or changes in place."""
    found: dict[str, set[str | None]] = {}
    for fn in functions_of(cls):
        if fn.name == "__init__":
            own = own_names(fn)  # a call of one (a parameter, a comprehension's variable) makes any class
            for node in statements_breadth_first(fn):
                for target in assignment_targets(node):
                    if is_self_attr(target):
                        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
                        made = _element_class(value)
                        found.setdefault(target.attr, set()).add(None if _called_own(made, own) else made)
    single = {attr: classes.pop() for attr, classes in found.items() if len(classes) == 1 and None not in classes}
    if not single:
        return {}  # most classes hold no layer list: their methods need no walk
    changed = _changed_in_place(cls)
    return {attr: cls_ for attr, cls_ in single.items() if cls_ is not None and attr not in changed}


def _element_class(value: ast.expr | None) -> str | None:
    """The one class that makes every element of the list ``value`` builds, None when it cannot be told."""
    if (
        isinstance(value, ast.Call)
        and dotted_name(value.func) in _LISTS
        and len(value.args) == 1
        and not value.keywords
    ):
        return _element_class(value.args[0])
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return _made(value.elt)
    if isinstance(value, (ast.List, ast.Tuple)) and value.elts:
        made = {_made(e) for e in value.elts}
        return made.pop() if len(made) == 1 else None
    return None


def _called_own(made: str | None, own: frozenset[str]) -> bool:
    return made is not None and made.partition(".")[0] in own


def _made(node: ast.expr) -> str | None:
    return dotted_name(node.func) if isinstance(node, ast.Call) else None


def _changed_in_place(cls: ast.ClassDef) -> set[str]:
    """The attributes some method of the class grows, changes an element of (``self.layers.append(x)``,
    ``self.layers[0] = x``, ``self.layers += [x]``, ``del self.layers[0]``) or stores outside ``__init__``."""
    changed = {
        target.attr
        for fn in functions_of(cls)
        if fn.name != "__init__"
        for node in walked_of(fn, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in assignment_targets(node)
        if is_self_attr(target)
    }
    for node in walked_of(cls, (ast.Call, ast.AugAssign)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATORS:
            if is_self_attr(node.func.value):
                changed.add(node.func.value.attr)
        elif isinstance(node, ast.AugAssign) and is_self_attr(node.target):
            changed.add(node.target.attr)
    for sub in walked_of(cls, ast.Subscript):
        if not isinstance(sub.ctx, ast.Load) and is_self_attr(sub.value):
            changed.add(sub.value.attr)
    return changed
