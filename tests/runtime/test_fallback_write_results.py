"""The race checker's schema fallback (``npudsl/race/_fallback.py``): a ``Tensor(a!)`` result is no view.

A node that cannot run on ``meta`` is judged by the schemas of its name. A result annotated ``Tensor(a)`` makes the
node a view of its first argument (it reads nothing, it names that memory); a result annotated ``Tensor(a!)`` is the
argument written in place handed back. The rule asked only ``alias_info is not None``, so where the written slot
held no tensor of the graph (nothing counted as written), the node became a view, and every tensor it read was
dropped from its reads: ``aten.add_(2.0, x)`` fits ``add_.Tensor(Tensor(a!) self, Tensor other)`` with ``self`` a
constant, and read nothing of ``x``. Every ATen schema with a written result writes a ``Tensor`` argument
(``aten.mul_.t`` on lists aside), so a captured graph rarely meets this: the test keeps the rule.
"""

from __future__ import annotations

import torch
import torch.fx

from npudsl.race._fallback import by_schema


def _node(target: object, *args: object) -> tuple[torch.fx.Node, torch.fx.Node]:
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    node = graph.call_function(target, tuple(x if a == "x" else a for a in args))  # type: ignore[arg-type]
    return node, x


def test_a_written_result_whose_slot_holds_no_node_reads_its_inputs() -> None:
    node, x = _node(torch.ops.aten.add_, 2.0, "x")
    effect = by_schema(node, [x])
    assert effect["reads"] == (x,)  # on main: () (taken for a view, reading nothing)
    assert effect["aliases"] is None


def test_a_view_result_still_makes_a_view() -> None:
    node, x = _node(torch.ops.aten.t, "x")
    effect = by_schema(node, [x])
    assert effect["reads"] == () and effect["aliases"] is x


def test_a_written_tensor_is_written() -> None:
    node, x = _node(torch.ops.aten.add_, "x", 1.0)
    effect = by_schema(node, [x])
    assert effect["writes"] == (x,) and effect["aliases"] is x
