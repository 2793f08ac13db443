"""What a statement does to the caller's object between two points of a caller: stores an attribute on something,
or calls through the object (or passes it on).

Two rules ask it of the statements between an earlier fork and a call: whether the call may wait for that fork
record (``reuse.py``) and whether a call given only an earlier call's results needs a fork of its own
(``bound_fork.py``). Either may change state the call's body or guard reads, so the call forks again.
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.walked import walked, walked_of

__all__ = ["calls_receiver", "stores_attribute"]


def stores_attribute(node: ast.AST) -> bool:
    """``node`` assigns to an attribute of something (``self.x = ...``, ``o.a.b += 1``)."""
    return any(isinstance(n, ast.Attribute) for t in scan.assignment_targets(node) for n in walked(t))


def calls_receiver(node: ast.AST, receiver: str | None) -> bool:
    """A call of something on the caller's object, or with the object passed on (``self.helper(x)``,
    ``self.cache.append(t)``, ``helper(self)``): it may change what a call's body or guard reads."""
    if receiver is None:
        return False
    for call in walked_of(node, ast.Call):
        passed = [*call.args, *(k.value for k in call.keywords)]
        root = (scan.dotted_name(call.func) or "").split(".")[0]
        if root == receiver or any(isinstance(a, ast.Name) and a.id == receiver for a in passed):
            return True
    return False
