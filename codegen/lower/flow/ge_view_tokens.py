"""GE: a view is no work of its own, so an event or a fork edge on a view orders on what made the viewed tensor.

torchair converts ``npu_wait_tensor(self, dependency)`` to an ``Identity`` of ``self`` with a control edge from
``dependency``'s GE node, and ``torchair.ops.wait([t])`` to control edges from ``t``'s node onto the waiting stream's
next op (``scope/_wait_tensor.py``, ``_ge_concrete_graph/fx2ge_converter.py``). A view converts to a GE node of its
own: ``view``/``reshape``/``_unsafe_view``/``alias`` to ``Reshape``, ``squeeze``/``unsqueeze`` to ``Squeeze``/
``Unsqueeze``, ``detach`` (and ``t`` of one dimension) to ``Identity``, which run no kernel; GE deletes a
static-shape ``Reshape`` (``ReshapeRemovePass``: ``IsolateAndDeleteNode``) and, isolating it, links each node
feeding it (its data input's producer too) to each node it fed by a control edge (``GraphUtils::IsolateNode``,
``RelinkControlNodeIfNeed``). So the edge lands on the producer of the viewed tensor: where that was the body's last
work, the wait still orders after the body; where the viewed tensor was made before (``return x.view(-1)``, ``x``
the caller's), the waiter orders after the caller's work only. Other views are kernels in GE (``transpose`` and
``permute``: ``Transpose``; ``x[0]``: ``GatherV2``; slices: ``StridedSliceV2``; ``expand``: ``BroadcastTo``), which
would carry the order; this rule does not tell them apart and reads every op whose ATen schema returns one view of
``self`` (``schema.aliases_self``, ``reshape`` and ``contiguous`` included: they copy only sometimes) as no work.
"""

from __future__ import annotations

import ast

from codegen.lower.flow.schema import aliases_self, one_tensor

__all__ = ["unviewed", "viewed"]


def viewed(node: ast.expr) -> ast.expr | None:
    """The tensor ``node`` takes one view of (``x.view(-1)``, ``torch.transpose(x, 0, 1)``: ``x``); None for any other
    expression."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    name, owner = node.func.attr, node.func.value
    if not (aliases_self(name) and one_tensor(name)):
        return None
    if isinstance(owner, ast.Name) and owner.id == "torch":
        return node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
    return owner


def unviewed(made: ast.expr, before: ast.stmt | None, *, named: bool) -> ast.expr | None:
    """The expression whose op makes the memory ``made`` views, where that op is the body's last work: a view of a
    call or of arithmetic is made by that; of a name, by the value ``before`` (the statement before the return)
    binds it to, unless ``made`` already is that value (``named``); None where the viewed tensor was made earlier."""
    while (base := viewed(made)) is not None:
        if not isinstance(base, ast.Name):
            made = base
            continue
        value = _bound_by(before, base.id)
        if named or value is None:
            return None
        made, named = value, True
    return made


def _bound_by(stmt: ast.stmt | None, name: str) -> ast.expr | None:
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    return stmt.value if stmt.targets[0].id == name else None
