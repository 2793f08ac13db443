"""What of objects' state an expression reads, named by its whole attribute chain: ``self.a.e.buf``, not ``self.a``.

A statement's state reads were named by the first attribute under a name (``self.a`` of ``self.a.e.buf``), while the
writes they are compared with are whole chains (``self.a.d.buf`` of ``self.a.d.buf.add_(1)``, ``state_writes.py``):
a call given ``self.a.e.buf`` and pending on a side stream read all of ``self.a``, and the caller's write of the
sibling ``self.a.d.buf`` waited for it. Each chain of attributes on a name is now read whole, up to where it is
called, indexed or viewed: ``self.a.e.foo()`` reads ``self.a.e`` (its method may read any of it), ``self.a[0].b``
reads ``self.a`` (an item stands for its container), and ``self.f(x)`` reads ``self.f`` as before. Two chains meet
as ``paths_meet.py`` says, so a write of the whole (``self.a``) or of a part (``self.a.e.buf.x``) still meets it.
"""

from __future__ import annotations

import ast

from codegen.index.paths import dotted_name
from codegen.index.walked import walked_of

__all__ = ["chain_reads"]


def chain_reads(node: ast.AST) -> set[str]:
    """The attribute chains on names that ``node`` reads, each whole: ``self.a.e.buf``, ``cfg.scale``."""
    attributes = list(walked_of(node, ast.Attribute))
    called = {id(call.func) for call in walked_of(node, ast.Call)}
    inner = {id(a.value) for a in attributes if id(a) not in called}  # under a longer chain read whole
    found: set[str] = set()
    for attribute in attributes:
        if id(attribute) in inner:
            continue
        if id(attribute) in called:  # a method: its object's chain is read as a chain of its own
            found |= {f"{attribute.value.id}.{attribute.attr}"} if isinstance(attribute.value, ast.Name) else set()
        elif (chain := dotted_name(attribute)) is not None:
            found.add(chain)
    return found
