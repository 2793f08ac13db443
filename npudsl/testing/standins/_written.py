"""Which op a GE wait orders after: the one that made the value a waited-for tensor holds where the wait stands.

torchair compiles the graph that aot_autograd's functionalization makes (``npu_fx_compiler.py`` calls
``aot_module_simplified``). There an in-place write (``t.add_(1)``, ``t.copy_(x)``, ``t[i] = v``, an op whose schema
marks ``Tensor(a!)``; ``dist.all_reduce(t)``, which dynamo traces as ``t.copy_(all_reduce(t))``) becomes a functional
op, and every later use of ``t``, or of any view of its memory, names that op's result (a view is made again from
it). ``torchair.ops.wait([t])`` is a custom op that writes nothing, so functionalization hands it that result; GE's
converter (``fx2ge_converter.py``, ``_build_wait_control_edge``) adds a control edge from the op that made it
(``ControlTensor(wait_op_arg.node)``), and ``npu_wait_tensor``'s converter does the same with its dependency. So
a wait orders after ``t``'s producer and after the last write of ``t``'s memory issued before the wait (a view of
``t`` made after that write is made again from its result: both orders hold). An in-place op that changes only
a view's metadata (ATen's ``inplace_view`` tag: ``unsqueeze_``, ``t_``, ``resize_``, ``set_``) becomes a view op,
which GE may fold into its readers: no write to count on (stricter than the device, never looser). Found by
experiment too: ``tests/targets/test_standin_inplace.py`` reads the graph ``aot_autograd`` makes.
"""

from __future__ import annotations

import torch
import torch.fx

from npudsl.race._access import accesses
from npudsl.race._alias import root

__all__ = ["last_write"]


def last_write(graph: torch.fx.Graph, tensor: torch.fx.Node, before: torch.fx.Node) -> torch.fx.Node | None:
    """The last node before ``before`` that writes ``tensor``'s memory in place (through any view); None: none."""
    order = {node: i for i, node in enumerate(graph.nodes)}
    memory, end = root(tensor), order[before]
    found: torch.fx.Node | None = None
    for access in accesses(graph):
        if order[access.node] >= end:
            break
        if access.write and access.memory is memory and access.node is not memory and _writes_data(access.node):
            found = access.node
    return found


def _writes_data(node: torch.fx.Node) -> bool:
    """The node's op writes data, not only a view's metadata (no overload of its ATen name is ``inplace_view``)."""
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    packet = getattr(torch.ops.aten, name, None) if name.endswith("_") else None
    if not isinstance(packet, torch._ops.OpOverloadPacket):
        return True
    return not any(torch.Tag.inplace_view in getattr(packet, o).tags for o in packet.overloads())
