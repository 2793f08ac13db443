"""Which of a caller's names only ever hold an element of one of its object's layer lists.

``for i, layer in enumerate(self.layers): layer.dispatch(x)`` calls a method of whatever ``layer`` holds. When
every element of ``self.layers`` is an instance of one class (:mod:`codegen.index.elements`) and nothing else
in the function binds ``layer`` (no other loop, assignment, parameter, import, ``with``, ``except`` or
definition of that name), the call reaches that class's method in every iteration, and after the loop too
(the name keeps the last element). Any other binding makes the name's class unknown: its calls stay
unresolved and run on their caller's stream.
"""

from __future__ import annotations

import ast

from codegen.index.paths import dotted_name
from codegen.index.scan import params_of
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.exprs import NAME_BINDERS, binding_name

__all__ = ["element_targets"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def element_targets(fn: _Function, receiver: str | None, lists: dict[str, str]) -> dict[str, str]:
    """{name: element class} for the loop targets of ``fn`` that walk ``<receiver>.<attr>`` (or ``enumerate``
    of it) for an attribute of ``lists`` ({attr: element class}), and that nothing else binds."""
    if receiver is None:
        return {}
    targets: dict[str, set[str]] = {}
    nodes: set[ast.Name] = set()
    for loop in walked(fn):
        found = _element_target(loop, f"{receiver}.", lists) if isinstance(loop, (ast.For, ast.AsyncFor)) else None
        if found is not None:
            targets.setdefault(found[0].id, set()).add(found[1])
            nodes.add(found[0])
    elsewhere = _bound_elsewhere(fn, nodes)
    return {name: classes.pop() for name, classes in targets.items() if len(classes) == 1 and name not in elsewhere}


def _element_target(loop: ast.For | ast.AsyncFor, prefix: str, lists: dict[str, str]) -> tuple[ast.Name, str] | None:
    """(the target name, the element class) of ``for x in self.attr`` / ``for i, x in enumerate(self.attr)``."""
    walked_list: ast.expr = loop.iter
    target: ast.expr | None = loop.target
    if isinstance(walked_list, ast.Call) and dotted_name(walked_list.func) == "enumerate" and walked_list.args:
        walked_list = walked_list.args[0]
        pair = isinstance(target, ast.Tuple) and len(target.elts) == 2
        target = target.elts[1] if pair else None  # type: ignore[union-attr]  # a Tuple when ``pair``
    dotted = dotted_name(walked_list) if isinstance(walked_list, ast.Attribute) else None
    if not isinstance(target, ast.Name) or dotted is None or not dotted.startswith(prefix):
        return None
    written = lists.get(dotted.removeprefix(prefix))
    return (target, written) if written else None


_BINDERS: tuple[type[ast.AST], ...] = (ast.Name, *NAME_BINDERS)  # what ``_bound_elsewhere`` reads


def _bound_elsewhere(fn: _Function, targets: set[ast.Name]) -> set[str]:
    """Names ``fn`` binds other than as one of the loop ``targets``: stores, deletes, parameters, definitions,
    imports, ``except ... as``."""
    found = set(params_of(fn))
    for node in walked_of(fn, _BINDERS):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and node not in targets:
            found.add(node.id)
        elif node is not fn and (name := binding_name(node)) is not None:
            found.add(name)
    return found
