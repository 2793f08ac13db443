"""What a call of a function the run cannot read writes of its arguments: the ATen schema where torch defines it,
every argument otherwise.

``ext_bump(x)`` with ``from extlib import bump as ext_bump`` (a third-party library, or a sibling file a
top-level module imports that the run does not hold) may write ``x`` in place: nothing the run reads says it
does not, so a call on another stream still reading ``x`` is joined before it. Torch's own functions are known
without reading torch: ``torch.relu_(x)`` writes ``x`` and ``torch.cat(xs)`` writes nothing, by the schema of
the ATen op of that name (``schema.py``: ``Tensor(a!) self``, the first argument of the function form); an op
called by its overload (``torch.ops.aten.mul_.Scalar(x, 2)``, ``torch.ops.aten.add.out(a, b, out=c)``) writes
exactly what that overload's schema types ``Tensor(a!)`` (``aten_overloads.py``). A torch function the table
does not hold (``torch.distributed.all_reduce``, a custom op) is as unknown as any other. A kernel may write what its
schema leaves plain: ``torch.batch_norm(h, w, b, rm, rv, True, ...)`` updates ``rm`` and ``rv``, as running the
public functions of ``torch`` at table-build time found (``aten_kernel_writes.py``; by its default overload too).

torch_npu's ops (``torch_npu.npu_rms_norm``, ``torch.ops.npu.npu_rms_norm``, ``.default`` or another overload
named) write the arguments their schema types ``Tensor(a!)`` (``npu_schema.py``): ``npu_rms_norm(x, w)``
writes nothing, ``npu_scatter_nd_update_(cache, i, u)`` writes ``cache``, ``npu_scatter_pa_kv_cache(k, v,
k_cache, v_cache, slots)`` the two caches, by position or keyword. An op the table lacks, or whose kernel
writes what its schema leaves plain (``npu_kv_rmsnorm_rope_cache``), writes every argument; so does a call
spreading ``*args`` or ``**kwargs`` into an op that writes anything.

What such a call returns may be an argument itself (:func:`foreign_results`): an ATen op writing ``self`` returns
it (``torch.relu_(x)`` is ``x``), and a torch_npu op's result is the argument its schema types with the same alias
set (``npu_scatter_nd_update_(Tensor(a!) self, ...) -> Tensor(a!)``) or its kernel returns as it came
(``npu_kv_rmsnorm_rope_cache``'s first two results are its ``k_cache`` and ``ckv_cache``: ``npu_schema.py``), and a
function that may hand an argument back as it came returns it (``F.dropout(t, p, training=False)``, ``torch.dropout``:
``torch_functional.handed_back_args``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.lower.flow import schema
from codegen.lower.flow.aten_forms import aten_function
from codegen.lower.flow.aten_kernel_writes import kernel_writes
from codegen.lower.flow.aten_overloads import overload_writes
from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.npu_schema import Param, returned_params, written_params
from codegen.lower.flow.torch_functional import functional_writes, handed_back_args, ran_functional
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["Results", "every_argument", "foreign_results", "foreign_writes", "npu_op"]

_ATEN = "torch"  # the namespace whose functions the ATen table (``aten_table.py``) describes
_ATEN_OPS = ("torch", "ops", "aten")  # an ATen op by its overload (``aten_overloads.py``)
_NPU = (("torch_npu",), ("torch", "ops", "npu"))  # where torch_npu's ops are reached (``npu_table.py``)
Results = list[tuple[int | None, ast.expr]]  # (the element of a returned tuple, None: the whole result; an argument)


def foreign_writes(call: ast.Call, dotted: Sequence[str]) -> frozenset[str]:
    """The caller's names whose memory ``call`` of the function ``dotted`` (``("torch", "relu_")``), which the
    run does not hold, may write in place."""
    npu = npu_op(dotted)
    if npu is not None:
        return _npu_writes(call, npu)
    if tuple(dotted[:3]) == _ATEN_OPS and len(dotted) in (4, 5):
        overload = dotted[4] if len(dotted) == 5 else None
        kernel = kernel_writes(call, dotted[3]) if overload in (None, "default") else frozenset()
        return _params_written(call, overload_writes(dotted[3], overload)) | kernel
    writes = schema.writes_self(dotted[-1]) if dotted[0] == _ATEN else None
    if writes is None and not ran_functional(dotted):  # ``F.gaussian_nll_loss``: no ATen op, the table's row
        return every_argument(call)
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "self"), None)
    written = alias_sources(first) if writes and first is not None else frozenset()
    kernel = kernel_writes(call, dotted[1]) if len(dotted) == 2 and dotted[0] == _ATEN else frozenset()
    return written | kernel | functional_writes(call, dotted)  # a body of ``torch.nn.functional`` (``F.embedding``)


def foreign_results(call: ast.Call, dotted: Sequence[str]) -> Results:
    """The arguments of ``call`` of ``dotted`` its result may be as they came, each with where in the result (see
    above); none known for any other function."""
    npu = npu_op(dotted)
    if npu is not None:
        returned = returned_params(*npu) or ()
        return [(r.position, arg) for r in returned for arg in _passed(call, [r.param])]
    if (op := aten_function(dotted)) is not None and schema.writes_self(op):  # ``F.relu_(x)``, ``torch.Tensor.add_``
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "self"), None)
        return [(None, first)] if first is not None else []
    return [(None, arg) for arg in handed_back_args(call, dotted)]  # ``F.dropout(t, p, training=False)`` is ``t``


def npu_op(dotted: Sequence[str]) -> tuple[str, str | None] | None:
    """The torch_npu op and overload ``dotted`` names (``torch.ops.npu.npu_rms_norm.default``), if it is one."""
    for prefix in _NPU:
        rest = tuple(dotted[len(prefix) :])
        if tuple(dotted[: len(prefix)]) == prefix and len(rest) in (1, 2):
            return rest[0], rest[1] if len(rest) == 2 else None
    return None


def _npu_writes(call: ast.Call, npu: tuple[str, str | None]) -> frozenset[str]:
    """What the call's arguments passed where some overload of the op writes hold (every argument: unknown)."""
    overloads = written_params(*npu)
    return _params_written(call, [p for written in overloads for p in written] if overloads is not None else None)


def _params_written(call: ast.Call, params: Sequence[Param] | None) -> frozenset[str]:
    """What the call's arguments passed to ``params`` hold (every argument: None, an unknown op)."""
    if params is None:
        return every_argument(call)
    spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if params and spread:
        return every_argument(call)
    return frozenset().union(*(alias_sources(v) for v in _passed(call, list(params))))


def _passed(call: ast.Call, params: list[Param]) -> list[ast.expr]:
    """The call's arguments that land on ``params``, by position or by keyword."""
    names = {p.name for p in params}
    positions = {p.position for p in params if p.position is not None}
    return [a for i, a in enumerate(call.args) if i in positions] + [k.value for k in call.keywords if k.arg in names]


def every_argument(call: ast.Call) -> frozenset[str]:
    """The names whose memory any argument of ``call`` may be or hold: what an unknown function may write. Only
    metadata read of a tensor (``x.shape[0]``, ``dtype=x.dtype``: ``torch.ones(...)``) passes none of its memory."""
    values = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
    return frozenset().union(*(alias_sources(v) & data_reads(v) for v in values))
