"""What a call of a function the run cannot read writes of its arguments: the ATen schema where torch defines it,
every argument otherwise.

``ext_bump(x)`` with ``from extlib import bump as ext_bump`` (a third-party library, or a sibling file a
top-level module imports that the run does not hold) may write ``x`` in place: nothing the run reads says it
does not, so a call on another stream still reading ``x`` is joined before it. Torch's own functions are known
without reading torch: ``torch.relu_(x)`` writes ``x`` and ``torch.cat(xs)`` writes nothing, by the schema of
the ATen op of that name (``schema.py``: ``Tensor(a!) self``, the first argument of the function form). A torch
function the table does not hold (``torch.distributed.all_reduce``, a custom op) is as unknown as any other.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.lower.flow import schema
from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["every_argument", "foreign_writes"]

_ATEN = "torch"  # the namespace whose functions the ATen table (``aten_table.py``) describes


def foreign_writes(call: ast.Call, dotted: Sequence[str]) -> frozenset[str]:
    """The caller's names whose memory ``call`` of the function ``dotted`` (``("torch", "relu_")``), which the
    run does not hold, may write in place."""
    writes = schema.writes_self(dotted[-1]) if dotted[0] == _ATEN else None
    if writes is None:
        return every_argument(call)
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "self"), None)
    return alias_sources(first) if writes and first is not None else frozenset()


def every_argument(call: ast.Call) -> frozenset[str]:
    """The names whose memory any argument of ``call`` may be or hold: what an unknown function may write. Only
    metadata read of a tensor (``x.shape[0]``, ``dtype=x.dtype``: ``torch.ones(...)``) passes none of its memory."""
    values = [a.value if isinstance(a, ast.Starred) else a for a in call.args] + [k.value for k in call.keywords]
    return frozenset().union(*(alias_sources(v) & data_reads(v) for v in values))
