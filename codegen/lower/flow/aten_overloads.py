"""Which arguments an ATen op called by its overload writes (``aten_overload_table.py``).

``torch.ops.aten.mul_.Scalar(x, 2)`` runs the overload ``mul_.Scalar(Tensor(a!) self, Scalar other)``: it writes
``x``; ``torch.ops.aten.add.Tensor(x, y)`` writes nothing; ``torch.ops.aten.add.out(x, y, out=z)`` writes ``z``;
``torch.ops.aten.sort.values(x, values=v, indices=i)`` writes ``v`` and ``i``. A call of the op without an
overload (``torch.ops.aten.mul_(x, 2)``) may run any of them: it writes what some overload writes. An op the
table lacks is unknown (None), as a name the table holds with an overload it does not list writes nothing (such a
call fails when it runs). The table is read on the first question only.
"""

from __future__ import annotations

import functools

from codegen.lower.flow.npu_schema import Param

__all__ = ["overload_writes"]


def overload_writes(op: str, overload: str | None) -> tuple[Param, ...] | None:
    """The parameters the ATen ``op``'s ``overload`` writes (any overload's, where None is named); None where the
    table lacks the op."""
    from codegen.lower.flow.aten_overload_table import OPS

    if op not in OPS:
        return None
    written = _by_op().get(op, {})
    chosen = written.values() if overload is None else [written.get(overload, ())]
    return tuple(dict.fromkeys(p for params in chosen for p in params))


@functools.cache
def _by_op() -> dict[str, dict[str, tuple[Param, ...]]]:
    """op -> overload -> the parameters it writes, for the overloads that write any."""
    from codegen.lower.flow.aten_overload_table import WRITES

    found: dict[str, dict[str, tuple[Param, ...]]] = {}
    for key, written in WRITES.items():
        op, _, overload = key.rpartition(".")
        found.setdefault(op, {})[overload] = tuple(_param(p) for p in written.split())
    return found


def _param(spelled: str) -> Param:
    """``self@0`` (by position or keyword) or ``out`` (by keyword only)."""
    name, _, position = spelled.partition("@")
    return Param(name, int(position) if position else None)
