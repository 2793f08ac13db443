"""GE: a returned container whose tensors a user event can order on, so that ``@records`` needs no token.

``torchair.ops.wait`` takes a list of tensors, so a recording body that returns a container can hand the waiter
the container's tensors instead of a ``torchair.ops.record()`` token (one call instead of two). That is sound
when waiting for every tensor of the container orders the waiter after the body's last work (on the premise of
``ge_returned.py``: a stream runs its work in the order issued). Three shapes hold:

- ``return list(t.split(n))`` (also ``chunk``, ``tensor_split``, bare or in ``list``/``tuple``), ``t`` certainly
  a tensor: one op, the body's last, makes every element, and these ops never return an empty tuple;
- ``return {k: f(v) for k, v in d.items()}``, no filter, iterating a name, every value certainly a tensor: the
  last iteration's op runs last and its value is in the dict;
- ``return f(x)`` where ``f`` is annotated ``-> dict[str, torch.Tensor]``: the premise a returned tensor's
  annotation already rests on (the call's last work makes what it returns) then says that work makes one of
  the dict's values.

A dict may be empty, and ``torchair.ops.wait`` takes at least one tensor: its spelling falls back to a token
then (``[*out.values()] or [torchair.ops.record()]``, traced only when empty). A container whose last work
writes in place, holds what may not be a tensor, or is made earlier, a comprehension that filters (the filter's
work may run after the last value) and ``unbind`` (it may return none) keep the token. The kind says how the
waiter lists the tensors: ``"all"`` (each element) or ``"values"`` (a dict's).
"""

from __future__ import annotations

import ast
from typing import Literal

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.index.returned import returned_value
from codegen.lower.flow.ge_returned import tensor_names
from codegen.lower.flow.tensors import Returns, is_tensor_expr

__all__ = ["Container", "returned_container"]

Container = Literal["all", "values"]
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_NEVER_EMPTY = frozenset({"split", "chunk", "tensor_split"})  # return at least one tensor, even of an empty one
_DICTS = frozenset({"dict", "Dict", "typing.Dict", "Mapping", "typing.Mapping", "collections.abc.Mapping"})
_ITERATIONS = frozenset({"items", "values", "keys"})


def returned_container(fn: _Function, *, method: bool, returns: Returns) -> Container | None:
    """How the tensors of the container the body returns are listed when they order the body; None: keep the
    token."""
    value = returned_value(fn)
    if value is None:
        return None
    known = tensor_names(fn, method=method, returns=returns)
    if _split(_unwrapped(value, fn), known, returns):
        return "all"
    if _tensor_comprehension(value, known, returns):
        return "values"
    return "values" if _tensor_dict_call(value, returns) else None


def _unwrapped(value: ast.expr, fn: _Function) -> ast.expr:
    """``list(x)`` / ``tuple(x)`` -> ``x`` when the builtin is not rebound in the function."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple")):
        return value
    if len(value.args) != 1 or value.keywords or isinstance(value.args[0], ast.Starred):
        return value
    bound = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for a in ast.walk(fn.args) if isinstance(a, ast.arg)}
    return value if value.func.id in bound else value.args[0]


def _split(value: ast.expr, known: frozenset[str], returns: Returns) -> bool:
    """``t.split(...)``: one op makes every element, and there is at least one."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    return value.func.attr in _NEVER_EMPTY and is_tensor_expr(value.func.value, known, returns)


def _tensor_comprehension(value: ast.expr, known: frozenset[str], returns: Returns) -> bool:
    """``{k: f(v) for k, v in d.items()}``: one loop over a name, no filter, every value certainly a tensor."""
    if not isinstance(value, ast.DictComp) or len(value.generators) != 1:
        return False
    loop = value.generators[0]
    if loop.ifs or loop.is_async or not _no_work(loop.iter):
        return False
    bound = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    return is_tensor_expr(value.value, known - bound, returns)


def _no_work(iterated: ast.expr) -> bool:
    """A name, or ``name.items()`` / ``.values()`` / ``.keys()``: iterating runs no op."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute):
        plain = not iterated.args and not iterated.keywords and iterated.func.attr in _ITERATIONS
        return plain and isinstance(iterated.func.value, ast.Name)
    return isinstance(iterated, ast.Name)


def _tensor_dict_call(value: ast.expr, returns: Returns) -> bool:
    """A call annotated ``-> dict[str, torch.Tensor]`` (a ``Mapping`` too)."""
    annotation = returns.get(ast.unparse(value.func)) if isinstance(value, ast.Call) else None
    if not isinstance(annotation, ast.Subscript) or ast.unparse(annotation.value) not in _DICTS:
        return False
    pair = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else []
    return len(pair) == 2 and annotation_tensorness(pair[1]) is Tensorness.TENSOR
