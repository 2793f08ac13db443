"""GE: a recording body's returned call is its event's token only where the function called makes that value.

``return ident(x)`` with ``def ident(t: torch.Tensor) -> torch.Tensor: return t``: the annotation says a tensor
(``tensors.py``), but the call makes nothing, ``x`` was made before the body (by the caller), and
``_EVENT_TOKENS[tag] = out`` ordered the waiter after the caller's work only, not after the body's. So where the
run reads the function called (``called_function.py``: a module-level function of this file, of another file of
the run or of its package on disk, or a method of the body's own class called on its receiver), its own last work
must make the one value it returns (``ge_returned.py``), followed through the functions it calls in turn, up to a
depth. The same holds for a returned container (``ge_containers.py``): ``return passthrough(d)`` with ``def
passthrough(d) -> dict[str, torch.Tensor]: return d`` listed the caller's tensors; the function read must make the
container it returns by its own last work, as a recording body must, or return a dict display whose value made
last its last work makes (omni-infer's ``dynamic_quant`` returns ``{"x_int8": ..., "pertoken_scale": scale}``). A
submodule made ``nn.Identity()`` returns its input too, and so may a submodule of a class of the run: its
``forward`` is read as a function is (``return self.skip(x)`` with ``Pass.forward`` returning ``x`` raced). For
``call(...)[i]`` (``self.proj(x)[0]``, a tuple whose only tensor is element ``i`` by the annotation), the body
called must return a tuple display whose element ``i`` its last work makes, every element after it a name or a
constant (vLLM's ``return super().forward(x), None``; ``return x, None`` raced). A call the run cannot read keeps the
premise of its annotation, as before; a name the body binds itself reaches no known function and keeps
``record()``.
"""

from __future__ import annotations

import ast

from codegen.index.class_chain import submodule_classes
from codegen.index.returned import returned_value
from codegen.lower.flow.called_function import Callee, binds, callee_of
from codegen.lower.flow.ge_containers import returned_container
from codegen.lower.flow.ge_returned import made_element, made_last, tensor_names
from codegen.lower.flow.ge_view_tokens import unviewed
from codegen.lower.flow.tensors import is_tensor_expr

__all__ = ["container_made_by_callee", "made_by_callee"]

_DEPTH = 8  # calls followed into the functions they call; deeper, nothing is taken as made
# torch.nn layers (``local_returns.py`` takes each to return one tensor) whose forward returns its input as it came
# (torch/nn/modules/linear.py: ``Identity.forward`` is ``return input``)
_PASSES_INPUT = frozenset({"Identity"})


def made_by_callee(made: ast.expr, at: Callee, index: object, depth: int = 0) -> bool:
    """Whether ``made``, the expression that makes the one value ``at``'s body returns, is made by that body's own
    last work as far as the run can read the functions it calls."""
    if isinstance(made, ast.Subscript):
        return _item_made(made, at, index, depth)
    if not isinstance(made, ast.Call):
        return True
    callee = _read(made, at, index, depth)
    if isinstance(callee, bool):
        return callee
    found = made_element(callee.node, method=callee.owner is not None, returns=callee.returns(index))
    if found is None or isinstance(returned_value(callee.node), ast.Tuple):
        return False
    return made_by_callee(found[1], callee, index, depth + 1)


def _item_made(made: ast.Subscript, at: Callee, index: object, depth: int) -> bool:
    """``call(...)[i]``: where the run reads the body called, it returns a tuple display whose element ``i`` its
    own last work makes, every element after it a name or a constant (no op runs there)."""
    call, item = made.value, made.slice
    if not isinstance(call, ast.Call) or not isinstance(item, ast.Constant) or type(item.value) is not int:
        return False
    callee = _read(call, at, index, depth)
    if isinstance(callee, bool):
        return callee
    value, body = returned_value(callee.node), callee.node.body
    if not isinstance(value, ast.Tuple) or any(isinstance(e, ast.Starred) for e in value.elts):
        return False
    running = [(i, e) for i, e in enumerate(value.elts) if not isinstance(e, ast.Constant)]
    before = body[-2] if len(body) > 1 else None
    found = made_last([e for _, e in running], before)
    if found is None or running[found[0]][0] != item.value % len(value.elts):
        return False
    maker = unviewed(found[1], before, named=found[1] is getattr(before, "value", None))  # a view: its tensor's maker
    return isinstance(maker, (ast.Call, ast.BinOp, ast.Subscript)) and made_by_callee(maker, callee, index, depth + 1)


def _read(call: ast.Call, at: Callee, index: object, depth: int) -> Callee | bool:
    """The function ``call`` reaches from ``at``'s body where the run reads it; else whether the call is taken to
    make its value: not where the body may bind its name, past the depth, or for a layer returning its input; yes
    (the premise of its annotation) where the run cannot read it."""
    if isinstance(call.func, ast.Name) and binds(at.node, call.func.id) or depth >= _DEPTH:
        return False
    if _layer_of(call, at, index) in _PASSES_INPUT:
        return False
    callee = callee_of(call, at, index)
    return True if callee is None else callee


def container_made_by_callee(at: Callee, index: object, depth: int = 0) -> bool:
    """Whether the container ``at``'s body returns, where a call returns it, is made by the last work of the
    function called, as far as the run can read it."""
    value = returned_value(at.node)
    if not isinstance(value, ast.Call):
        return True
    callee = _read(value, at, index, depth)
    if isinstance(callee, bool):
        return callee
    if _dict_made(callee, index, depth):
        return True
    if returned_container(callee.node, method=callee.owner is not None, returns=callee.returns(index)) is None:
        return False
    return container_made_by_callee(callee, index, depth + 1)


def _dict_made(at: Callee, index: object, depth: int) -> bool:
    """``at``'s body returns a dict display of constant keys whose value made last is made by an op of its last
    work, certainly a tensor (``return {"x_int8": torch.round(x / s), "scale": s}``): never empty, and waiting for
    every value orders after that op."""
    fn, value = at.node, returned_value(at.node)
    if not isinstance(value, ast.Dict) or not all(isinstance(k, ast.Constant) for k in value.keys):
        return False
    found = made_last(value.values, fn.body[-2] if len(fn.body) > 1 else None)
    if found is None or not isinstance(found[1], (ast.Call, ast.BinOp)):
        return False
    method, returns = at.owner is not None, at.returns(index)
    known = tensor_names(fn, method=method, returns=returns)
    return is_tensor_expr(found[1], known, returns) and made_by_callee(found[1], at, index, depth + 1)


def _layer_of(call: ast.Call, at: Callee, index: object) -> str | None:
    """The torch.nn class of the submodule ``call`` calls on ``at``'s receiver, as its class's ``__init__`` (or a
    base's) makes it (``self.skip = nn.Identity()``, or a factory's ``return nn.Identity()``: ``Identity``)."""
    func = call.func
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name) or func.value.id != at.receiver:
        return None
    classes = [n for n in at.tree.body if isinstance(n, ast.ClassDef) and n.name == at.owner]
    made = submodule_classes(index, at.module, classes[0]).get(func.attr) if len(classes) == 1 else None
    return made[1].rpartition(".")[2] if made else None
