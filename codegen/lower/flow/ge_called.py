"""GE: which element of a tuple that a recording body's last call returns is made last, so that an event orders on it.

``@records("e")`` on a body that ends ``return dispatch(x, ids, n)`` (or ``out = dispatch(...)``, ``return out``)
hands its caller the tuple that ``dispatch`` displays: ``return rows, ids, torch.bincount(ids, minlength=n)``. The
body's last work is that call, and the call's last work is the op that makes the element after which every element
is a name (``ge_returned.py`` reads the callee's body as it reads a recording body), here ``bincount``: the token is
``out[2]``, and the waiter's ``torchair.ops.wait([...])`` orders after the whole body, one call instead of
``record()`` and ``wait`` (omni-infer's dispatch returns its expert counts last). The callee is a module-level
function the run reads (``called_function.py``: a method may be overridden), the same whether the files are
transformed together or alone; the element is certainly a tensor of its own: made by arithmetic or by an ATen op
whose schema returns one tensor that is no view of its operands (a view, ``ids = topk_ids.reshape(-1)``, is made by
what made the operand: maybe the caller, before the body's work). Anything else keeps ``record()``.
"""

from __future__ import annotations

import ast

from codegen.index.returned import returned_value
from codegen.lower.flow.called_function import Callee, callee_of
from codegen.lower.flow.ge_returned import made_element, made_last
from codegen.lower.flow.schema import aliases_self, one_tensor

__all__ = ["called_element"]


def called_element(at: Callee, index: object) -> int | None:
    """The index, in the tuple that the last work of ``at``'s body (a call of a function of the run) returns, of
    the element that call makes last, certainly a tensor of its own; None where there is none."""
    fn, value = at.node, returned_value(at.node)
    found = made_last([value], fn.body[-2] if len(fn.body) > 1 else None) if value is not None else None
    call = found[1] if found is not None else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        return None
    callee = callee_of(call, at, index)
    if callee is None or not isinstance(returned_value(callee.node), ast.Tuple):
        return None
    element = made_element(callee.node, method=False, returns=callee.returns(index))
    return element[0] if element is not None and _own_tensor(element[1]) else None


def _own_tensor(node: ast.expr) -> bool:
    """Arithmetic, or an ATen op (a tensor method or ``torch`` function) whose schema returns one tensor that is
    no view of its operands: a tensor whose producer is that op."""
    if isinstance(node, ast.BinOp):
        return True
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    return bool(one_tensor(node.func.attr)) and not aliases_self(node.func.attr)
