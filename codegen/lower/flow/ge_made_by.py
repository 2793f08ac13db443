"""GE: a recording body's returned call is its event's token only where the function called makes that value.

``return ident(x)`` with ``def ident(t: torch.Tensor) -> torch.Tensor: return t``: the annotation says a tensor
(``tensors.py``), but the call makes nothing, ``x`` was made before the body (by the caller), and
``_EVENT_TOKENS[tag] = out`` ordered the waiter after the caller's work only, not after the body's. So where the
run reads the function called (``called_function.py``: a module-level function of this file, of another file of
the run or of its package on disk, or a method of the body's own class called on its receiver), its own last work
must make the one value it returns (``ge_returned.py``), followed through the functions it calls in turn, up to a
depth. A call the run cannot read keeps the premise of its annotation, as before; a name the body binds itself
reaches no known function and keeps ``record()``.
"""

from __future__ import annotations

import ast

from codegen.index.returned import returned_value
from codegen.lower.flow.called_function import Callee, binds, callee_of
from codegen.lower.flow.ge_returned import made_element

__all__ = ["made_by_callee"]

_DEPTH = 8  # calls followed into the functions they call; deeper, nothing is taken as made


def made_by_callee(made: ast.expr, at: Callee, index: object, depth: int = 0) -> bool:
    """Whether ``made``, the expression that makes the one value ``at``'s body returns, is made by that body's own
    last work as far as the run can read the functions it calls."""
    if not isinstance(made, ast.Call):
        return True
    if isinstance(made.func, ast.Name) and binds(at.node, made.func.id) or depth >= _DEPTH:
        return False
    callee = callee_of(made, at, index)
    if callee is None:
        return True  # the premise of its annotation
    found = made_element(callee.node, method=callee.owner is not None, returns=callee.returns(index))
    if found is None or isinstance(returned_value(callee.node), ast.Tuple):
        return False
    return made_by_callee(found[1], callee, index, depth + 1)
