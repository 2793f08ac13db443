"""The attributes of its object a method's calls write through locals that hold them, whatever the spelling of the
function a call reaches.

``v = self.count`` then ``th.relu_(v)`` (``import torch as th``), ``relu_(v)`` (``from torch import relu_``),
``F.relu_(v)`` or ``th.Tensor.add_(v, 1)`` writes ``self.count``: the call runs the ATen op ``relu_`` (``add_``),
whose schema writes its ``self``, however the module it is reached through is spelled. The spelling alone
(``written_exprs.py``) knows torch only as ``torch``; the module's imports say what each name is
(``imported_writes.py``, ``foreign_writes.py``), and a function of the run or a helper writes what its body writes
(``param_writes.written_arguments``). Each argument such a call writes that holds state through a local
(``state_views.state_locals``) writes that state, named as ``state_access.writes_state`` names it (the first
attribute). ``call_state_writes.py`` reads the chains a call is given directly (``relu_(self.count)``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.index.walked import walked_of
from codegen.lower.flow.param_writes import written_arguments
from codegen.lower.flow.state_views import state_locals
from codegen.lower.flow.view_roots import alias_sources

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["held_state_calls"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def held_state_calls(fn: _Function, scope: Scope) -> frozenset[str]:
    """The attributes of ``scope.receiver``'s object that ``fn``'s calls write through a local holding them."""
    held = state_locals(fn, scope.receiver, scope) if scope.receiver is not None else {}
    if not held:
        return frozenset()
    found: set[str] = set()
    for call in walked_of(fn, ast.Call):
        given = [a for a in [*call.args, *(k.value for k in call.keywords)] if alias_sources(a) & held.keys()]
        if given:
            found |= _written(call, scope, held)
    return frozenset(found)


def _written(call: ast.Call, scope: Scope, held: dict[str, frozenset[str]]) -> set[str]:
    """What of the object ``call`` writes through the locals in ``held`` it is given."""
    written = written_arguments(call, scope.functions, scope.owner, scope.receiver)
    names = frozenset().union(*(alias_sources(a) for a in written))
    return set().union(*(held[name] for name in names & held.keys()))
