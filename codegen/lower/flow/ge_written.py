"""GE: a tensor the recording body writes in place as its last work, so that a user event orders on it.

On GE the graph torchair compiles is functionalized (aot_autograd): an in-place write (``kv_cache[1].index_copy_
(...)``, ``cache[i] = v``, ``h += x``; ``dist.all_reduce(grad)``, which dynamo traces as ``grad.copy_(...)``) becomes
an op whose result every later use of the tensor names, and ``torchair.ops.wait([t])`` placed after the write
orders on that op (``npudsl/testing/standins/_written.py`` has the torchair source lines). So a body whose last
statement writes a tensor in place, followed only by a return that runs no op (names, constants, shapes:
``return k_pe, kv_a, latent.shape[0]``), can hand the waiter that tensor instead of a ``torchair.ops.record()``
token: one call instead of two, on the premise of every GE event here (a stream runs its work in the order issued).

The tensor is spelled again where the record stands, so it must be a name or a constant index of one (``grad``,
``kv_cache[1]``) that holds a tensor for certain: a name ``tensors.py`` knows, or a constant index of
a parameter annotated ``tuple[...]`` with a tensor there, nothing rebinding the parameter. The write must be an ATen
op that writes its object's data (``schema.py``; not ``record_stream``, which runs nothing, nor ``unsqueeze_`` or
``resize_``, which change only metadata), a store into an item or an augmented assignment of a tensor, or one of the
``torch.distributed`` collectives that dynamo rewrites into ``copy_`` of their first argument. A write under an
``if``, followed by other work, or returned as a value that runs an op (``return out + 1``) keeps the token.
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness, annotation_tensorness
from codegen.index.returned import returned_value
from codegen.lower.flow import schema
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.ge_returned import tensor_names
from codegen.lower.flow.tensor_bindings import in_order
from codegen.lower.flow.tensors import Returns, is_tensor_expr

__all__ = ["written_token"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
# dynamo traces these as ``first.copy_(<functional collective>)`` (``traceable_collective_remaps``)
_COLLECTIVES = frozenset({"all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor"})
_DISTRIBUTED = "torch.distributed"
_SHAPES = frozenset({"shape", "dtype", "device", "ndim"})
_SIZES = frozenset({"size", "dim", "numel"})
_TUPLES = frozenset({"tuple", "Tuple", "typing.Tuple"})
# ops whose schema marks ``self`` written though no data changes (the ``inplace_view`` ones, metadata only, the table
# says itself): ``requires_grad_`` sets an autograd flag, ``record_stream`` runs nothing
_NO_DATA = frozenset({"requires_grad_", "record_stream"})


def written_token(fn: _Function, *, method: bool, returns: Returns, tree: ast.Module) -> str | None:
    """The tensor, as source, that the body's last work writes in place; None: keep the token."""
    value = returned_value(fn)
    if value is None or len(fn.body) < 2 or not _quiet(value):
        return None
    written = _written(fn.body[-2], _distributed_names(tree))
    if written is None or not _spelled_again(written) or not _certain(written, fn, method=method, returns=returns):
        return None
    return ast.unparse(written)


def _written(stmt: ast.stmt, distributed: frozenset[str]) -> ast.expr | None:
    """What ``stmt`` writes in place, when that is all it does at its end."""
    if isinstance(stmt, ast.AugAssign):
        return stmt.target if isinstance(stmt.target, ast.Name) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
        return stmt.targets[0].value
    call = stmt.value if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) else None
    if call is None or not isinstance(call.func, ast.Attribute):
        return None
    if _writes_data(call.func.attr):
        return call.func.value
    return _collective(call, distributed)


def _writes_data(method: str) -> bool:
    """An ATen method that writes its object's data in place (``index_copy_``; not ``unsqueeze_`` nor ``resize_``,
    which ATen tags ``inplace_view``: metadata only)."""
    in_place = method.endswith("_") and bool(schema.writes_self(method))
    return in_place and method not in _NO_DATA and not schema.metadata_only(method)


def _collective(call: ast.Call, distributed: frozenset[str]) -> ast.expr | None:
    """``dist.all_reduce(t)`` (no ``async_op``): its first argument."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in _COLLECTIVES or not call.args:
        return None
    if ast.unparse(func.value) not in distributed | {_DISTRIBUTED} or any(k.arg == "async_op" for k in call.keywords):
        return None
    return None if isinstance(call.args[0], ast.Starred) else call.args[0]


def _distributed_names(tree: ast.Module) -> frozenset[str]:
    """The module-level names bound to ``torch.distributed`` by an import (``import torch.distributed as dist``) and
    by nothing else there."""
    found: set[str] = set()
    other: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            found |= {a.asname for a in stmt.names if a.name == _DISTRIBUTED and a.asname}
        elif isinstance(stmt, ast.ImportFrom) and stmt.module == "torch" and not stmt.level:
            found |= {a.asname or a.name for a in stmt.names if a.name == "distributed"}
        else:
            other |= bound_names(stmt)
    return frozenset(found - other)


def _quiet(value: ast.expr) -> bool:
    """The returned value runs no op: names, constants, tuples of them, shapes and sizes of a name."""
    if isinstance(value, (ast.Name, ast.Constant)):
        return True
    if isinstance(value, ast.Tuple):
        return all(_quiet(e) for e in value.elts)
    if isinstance(value, ast.Attribute):
        return value.attr in _SHAPES and isinstance(value.value, ast.Name)
    if isinstance(value, ast.Subscript):
        return isinstance(value.slice, ast.Constant) and isinstance(value.value, ast.Attribute) and _quiet(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and not value.keywords:
        plain = all(isinstance(a, ast.Constant) for a in value.args)
        return plain and value.func.attr in _SIZES and isinstance(value.func.value, ast.Name)
    return False


def _spelled_again(node: ast.expr) -> bool:
    """Reading ``node`` again runs nothing that could differ: a name, or a constant index of one."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int) and _spelled_again(node.value)
    return isinstance(node, ast.Name)


def _certain(node: ast.expr, fn: _Function, *, method: bool, returns: Returns) -> bool:
    """``node`` holds a tensor for certain (``torchair.ops.wait`` takes tensors only)."""
    if is_tensor_expr(node, tensor_names(fn, method=method, returns=returns), returns):
        return True
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return False
    return _tuple_param_element(fn, node.value.id, node.slice.value) is Tensorness.TENSOR  # type: ignore[attr-defined]


def _tuple_param_element(fn: _Function, name: str, index: int) -> Tensorness:
    """Element ``index`` of a parameter annotated ``tuple[...]`` that nothing rebinds."""
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    annotation = next((p.annotation for p in params if p.arg == name), None)
    if any(name in bound_names(s) for s in in_order(fn.body)) or not isinstance(annotation, ast.Subscript):
        return Tensorness.MAYBE
    if ast.unparse(annotation.value) not in _TUPLES:
        return Tensorness.MAYBE
    elements = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if len(elements) == 2 and isinstance(elements[1], ast.Constant) and elements[1].value is Ellipsis:
        return annotation_tensorness(elements[0])
    in_range = -len(elements) <= index < len(elements) and Ellipsis not in [getattr(e, "value", None) for e in elements]
    return annotation_tensorness(elements[index]) if in_range else Tensorness.MAYBE
