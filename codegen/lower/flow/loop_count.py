"""Where a ``for`` loop's count can be spelled: ``i + 1 < len(self.layers)`` holds exactly where another iteration
follows.

A model's layer loop walks ``enumerate(self.layers)``. Its index ``i`` reaches ``len(self.layers) - 1`` in the last
iteration, and that length is the list's when the loop began only where nothing changes it: a layer list of the
caller's object whose every store is in ``__init__`` and that no method grows or changes in place
(``codegen/index/elements.py``, the same list whose elements' calls the run resolves). The index is a name the
body binds nowhere else. ``next_iteration.py`` keeps inputs and records joins by this test; ``last_iteration.py``
knows it false in the loop's last iteration.
"""

from __future__ import annotations

import ast

from codegen.index.paths import dotted_name
from codegen.lower.flow.exprs import bound_names

__all__ = ["enumerated"]


def enumerated(loop: ast.For, receiver: str | None, sized: frozenset[str]) -> tuple[str, str]:
    """``("i", "len(self.layers)")`` of ``for i, x in enumerate(self.layers)`` over a layer list of fixed length
    (``sized``: those of the caller's object, ``receiver``); empty strings otherwise."""
    call, target = loop.iter, loop.target
    if not (isinstance(call, ast.Call) and dotted_name(call.func) == "enumerate"):
        return "", ""
    if len(call.args) != 1 or call.keywords or not isinstance(target, ast.Tuple) or len(target.elts) != 2:
        return "", ""
    index, walked_list = target.elts[0], call.args[0]
    if not isinstance(walked_list, ast.Attribute) or receiver is None or dotted_name(walked_list.value) != receiver:
        return "", ""
    if walked_list.attr not in sized or not isinstance(index, ast.Name):
        return "", ""
    if any(index.id in bound_names(s) for s in loop.body):
        return "", ""
    return index.id, f"len({ast.unparse(walked_list)})"
