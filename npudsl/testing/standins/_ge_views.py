"""GE: a view that compiles to no kernel is no op of its own, so an order on it lands on what made the viewed tensor.

torchair converts each ATen op of the graph to GE nodes (``_ge_concrete_graph/ge_converter/aten/``): ``view``,
``_unsafe_view`` and ``alias`` to ``Reshape``, ``squeeze`` to ``Squeeze`` (``Identity`` where no dimension is 1),
``unsqueeze`` to ``Unsqueeze``, ``detach`` and ``t`` of fewer than two dimensions to ``Identity``. GE deletes them
from a static-shape graph (``DimensionAdjustPass`` for ``Reshape``/``Squeeze``/``Unsqueeze``, ``IdentityPass``),
and deleting a node links every node feeding it, the viewed tensor's producer included, to every node it fed by a
control edge (``GraphUtils::IsolateNode``, ``RelinkControlNodeIfNeed``). So ``npu_wait_tensor(x, v)`` or
``torchair.ops.wait([v])`` of such a view ``v`` orders after the op that made the viewed tensor, wherever ``v``
stands, and a ``torchair.ops.record()`` whose stream's last op was such a view (torchair's token is that last op,
``fx2ge_converter.py``: ``_build_record_control_edge``) orders there too. Every other view (``transpose``,
``permute``, ``t`` of a matrix, ``select``, ``slice``, ``expand``...) is a kernel in GE and orders where it stands,
as does any op whose result shares no memory with its arguments. The ATen ops a node reaches are read by running
it on ``meta`` (what aot_autograd hands torchair); a node that cannot run there counts as a kernel (the stand-in as
it was). Not modelled: torchair's ``enable_view_optimize`` (on by default) skips ``view``/``reshape``/``t``/
``transpose``/``permute`` outside every scope and rebuilds them at their first consumer, which moves a transpose
made on the caller's stream to where it is read.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.fx
from torch.utils._python_dispatch import TorchDispatchMode

from npudsl.race._alias import effect
from npudsl.race._meta import metas

__all__ = ["viewed"]

_ATEN = torch.ops.aten
_NO_KERNEL = {
    _ATEN.view.default,
    _ATEN.reshape.default,
    _ATEN._unsafe_view.default,
    _ATEN.alias.default,
    _ATEN.detach.default,
    _ATEN.squeeze.default,
    _ATEN.squeeze.dim,
    _ATEN.unsqueeze.default,
}


class _Ops(TorchDispatchMode):
    """Whether every ATen op reached (the outermost ones: what aot_autograd records) compiles to no GE kernel."""

    def __init__(self) -> None:
        super().__init__()
        self.kernel = False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        flat = func is _ATEN.t.default and args[0].dim() < 2
        self.kernel = self.kernel or not (func in _NO_KERNEL or flat)
        return func(*args, **(kwargs or {}))


def _no_kernel(node: torch.fx.Node) -> bool:
    inputs = list(dict.fromkeys(node.all_input_nodes))
    try:
        args, kwargs, _ = metas(node, inputs)
        with torch.no_grad(), _Ops() as ops:
            if node.op == "call_method":
                getattr(args[0], str(node.target))(*args[1:], **kwargs)
            else:
                node.target(*args, **kwargs)  # type: ignore[operator]
    except Exception:  # noqa: BLE001 - what meta cannot run is a kernel, as the stand-in always read it
        return False
    return not ops.kernel


def viewed(node: torch.fx.Node) -> torch.fx.Node | None:
    """The argument whose memory ``node`` views where GE compiles ``node`` to no kernel; None for any other node."""
    if node.op not in ("call_function", "call_method"):
        return None
    found = effect(node)
    if found.aliases is None or found.writes or found.reads:
        return None
    return found.aliases if _no_kernel(node) else None
