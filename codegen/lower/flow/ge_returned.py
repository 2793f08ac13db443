"""GE: which value a recording body returns that its last work makes, so that a user event orders on it.

``@records("e")`` on GE stores a token that the waiter's ``torchair.ops.wait([...])`` orders on. The token can
be a tensor the body returns, when its producer is the body's last work: the waiter then orders after that
producer, and the side stream issued all the body's other work before it (one call instead of ``record()`` and
``wait``; the premise of every GE event here: a stream runs its work in the order issued, and GE orders by data
what the waiter reads of the other elements). That holds for the one tensor returned (``return torch.mm(a, b)``,
or ``out = a @ b`` then ``return out``), for the element of a returned tuple whose op runs last, every element
after it a name (``return weights / weights.sum(-1), ids``; no constant: the return would bind it to a name of
its own), and for ``call(...)[i]`` where the call returns a tuple whose only tensor is element ``i``
(``self.proj(x)[0]`` of a linear layer returning ``(out, None)``). A view is no work of its own: the value is made
by what made the viewed tensor (``ge_view_tokens.py``; ``return x.view(-1)`` of a tensor the caller made keeps the
token). Where the last work writes something in place, returns a name made earlier, or makes what may not be a
tensor, the token stays (a returned list or
dict: ``ge_containers.py``; a tuple a call of another function returns, whose element made last the callee's body
says: ``ge_called.py``, which reads that body with :func:`made_element`).
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness, signature_of
from codegen.index.returned import returned_value
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.ge_view_tokens import unviewed
from codegen.lower.flow.tensor_bindings import certain_bindings, in_order
from codegen.lower.flow.tensors import Returns, is_tensor_expr, tuple_element, tuple_elements

__all__ = ["made_element", "made_last", "returned_element", "tensor_names"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def returned_element(fn: _Function, *, method: bool, returns: Returns) -> int | None:
    """The index of the returned value (0 for one value, else in the returned tuple) that the body's last work
    makes, certainly a tensor; None when there is none."""
    found = made_element(fn, method=method, returns=returns)
    return found[0] if found is not None else None


def made_element(fn: _Function, *, method: bool, returns: Returns) -> tuple[int, ast.expr] | None:
    """:func:`returned_element`, with the expression that makes that value."""
    body, value = fn.body, returned_value(fn)
    if value is None:
        return None
    elements = value.elts if isinstance(value, ast.Tuple) else [value]
    if isinstance(value, ast.Tuple) and any(isinstance(e, (ast.Starred, ast.Constant)) for e in elements):
        return None  # each element of the tuple gets a name at the return: a constant would too
    before = body[-2] if len(body) > 1 else None
    found = made_last(elements, before)
    made = unviewed(found[1], before, named=found[1] is getattr(before, "value", None)) if found else None
    if found is None or not (isinstance(made, (ast.Call, ast.BinOp)) or _sole_tensor(found[1], returns)):
        return None  # a name, an index of one, or a view of one: made earlier, maybe by the caller
    if not is_tensor_expr(found[1], tensor_names(fn, method=method, returns=returns), returns):
        return None
    return found[0], made if made is not None else found[1]


def tensor_names(fn: _Function, *, method: bool, returns: Returns) -> frozenset[str]:
    """The names of ``fn`` that hold a tensor wherever they are read: parameters annotated as tensors that nothing
    rebinds, and the names the body certainly binds to tensors (``tensors.certain_bindings``)."""
    rebound = set().union(*(bound_names(s) for s in in_order(fn.body)))
    params = {p.name for p in signature_of(fn, method=method).params if p.tensor is Tensorness.TENSOR} - rebound
    bound = {n for names in certain_bindings(fn, method=method, returns=returns).values() for n in names}
    return frozenset(params | bound)


def made_last(elements: list[ast.expr], before: ast.stmt | None) -> tuple[int, ast.expr] | None:
    """The element whose op runs last, with the expression that makes it: the last element that is not a name,
    or, when every element is one, the name the statement right before the return binds."""
    running = [i for i, e in enumerate(elements) if not isinstance(e, ast.Name)]
    if running:
        return running[-1], elements[running[-1]]
    if not isinstance(before, ast.Assign) or len(before.targets) != 1 or not isinstance(before.targets[0], ast.Name):
        return None
    bound = [i for i, e in enumerate(elements) if isinstance(e, ast.Name) and e.id == before.targets[0].id]
    return (bound[-1], before.value) if bound else None


def _sole_tensor(node: ast.expr, returns: Returns) -> bool:
    """``call(...)[i]`` where the call returns a tuple whose only tensor is element ``i`` (``(out, None)``, as
    vLLM's linear layers return): the call's last work made it."""
    if not isinstance(node, ast.Subscript) or tuple_element(node, returns) is None:
        return False
    elements = tuple_elements(node.value, returns) or []
    tensors = [annotation_tensorness(e) for e in elements]
    return tensors.count(Tensorness.TENSOR) == 1 and tensors.count(Tensorness.NO) == len(tensors) - 1
