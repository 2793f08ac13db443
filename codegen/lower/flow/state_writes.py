"""Which of objects' state a statement of the caller writes in place, named as a planned call's state reads are.

``y = self.side(x)``, whose body reads ``self.buf``, then ``self.buf.mul_(2)`` on the caller's stream: the write
may land while the side stream still reads the tensor, so the statement waits for the call first (``transfer.py``).
Likewise ``self.sub.scale.mul_(2)`` after ``self.sub(x)``, whose ``forward`` reads ``self.scale``, and
``self.buf[0] = v`` or ``self.buf += 1``. The state written is the attribute chain under the write, through views
and items (``self.sub.scale[0].add_(1)``: ``self.sub.scale``); a write is an ATen op writing ``self`` (its schema,
``schema.py``; a name the table lacks when spelled with a trailing underscore), ``out=``, an augmented assignment
or a store into an item. A rebinding (``self.stash = t``) writes no memory the pending call reads.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codegen.index.scan import dotted_name
from codegen.index.walked import walked
from codegen.lower.flow import schema
from codegen.lower.flow.view_roots import view_base

__all__ = ["state_writes"]


def state_writes(stmt: ast.stmt) -> frozenset[str]:
    """The attribute chains (``self.buf``, ``self.sub.scale``) whose memory ``stmt`` writes in place."""
    chains = (_chain(target) for node in walked(stmt) for target in _written(node))
    return frozenset(c for c in chains if c is not None)


def _written(node: ast.AST) -> Iterator[ast.expr]:
    """The expressions whose memory ``node`` itself writes."""
    if isinstance(node, ast.AugAssign):
        yield node.target
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        yield from (t.value for t in targets if isinstance(t, ast.Subscript))
    elif isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and _writes_self(node.func.attr):
            yield node.func.value
        for keyword in node.keywords:
            if keyword.arg == "out":
                value = keyword.value
                yield from value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]


def _writes_self(method: str) -> bool:
    known = schema.writes_self(method)
    return known if known is not None else method.endswith("_") and not method.startswith("_")


def _chain(node: ast.expr) -> str | None:
    """The attribute chain under views and items (``self.buf`` of ``self.buf.view(-1)[0]``), if one."""
    while not isinstance(node, ast.Attribute) and (below := view_base(node)) is not None:
        node = below
    return dotted_name(node) if isinstance(node, ast.Attribute) else None
