"""What a call hands out of its caller's object where the run does not read what it runs as a method of that object.

``handed_results.py`` reads a method of the run through its ``return`` statements. Two kinds of call it cannot read
so: a method of an object whose class is from outside the run (``self.ext.buf()``, ``self.pick()`` inherited from a
library's base), which may hand out any of that object, as ``unread_methods.py`` says it may write it (a layer's own
call, ``self.norm(x)``, makes its result); and a function given the object's state (``pick(self.b)``,
``helper(self)``), of the run or imported, which may hand back what it was given. A builtin (``enumerate``, ``len``)
hands out nothing, as for the caller's tensors (``result_aliases.py``): ``for i, layer in enumerate(self.layers)``
binds no state to ``i``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.changed_objects import object_path
from codegen.lower.flow.imported_writes import ModuleFunctions
from codegen.lower.flow.torch_module_methods import runs_forward
from codegen.lower.flow.unread_methods import unread_method_writes

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["given_results", "unread_results"]


def unread_results(call: ast.Call, parts: list[str], scope: Scope) -> frozenset[str]:
    """A method of the object the run cannot read hands out what it may write (``unread_methods.py``: ``self.sub``
    and ``self.sub.*`` of ``self.sub.pick()``, ``self.*`` of ``self.pick()`` inherited from outside the run); a
    layer's call (``self.norm(x)``, ``self.sub.forward(x)``) makes its result. Where the run's modules are not at
    hand, any method's call may hand out any of its object."""
    if parts[-1] == "forward" or runs_forward(parts[-1]):
        return frozenset()
    functions = scope.functions
    if not isinstance(functions, ModuleFunctions):
        return frozenset({".".join(parts[1:-1]) or "*"})
    made = functions.index.submodules.get(f"{functions.key}:{scope.owner}", {})  # type: ignore[attr-defined]
    if len(parts) == 2 and parts[1] in made:
        return frozenset()  # a layer ``__init__`` makes, called
    receiver = scope.receiver or ""
    written = unread_method_writes(call, scope.functions, scope.owner, receiver)
    whole = [c for c in written if not c.endswith(".*") or c == f"{receiver}.*"]  # ``self.sub``, or ``self.*``
    return frozenset(c[len(receiver) + 1 :] for c in whole)


def given_results(call: ast.Call, scope: Scope) -> frozenset[str]:
    """A function of the run, or one it cannot read, given the object's state (``pick(self.b)``, ``helper(self)``):
    it may hand it back. A builtin (``enumerate(self.layers)``, ``len(self.cache)``) or a name the module does not
    bind hands out none, as for the caller's tensors (``result_aliases.py``)."""
    if not isinstance(call.func, ast.Name) or not _reached(call, scope):
        return frozenset()
    receiver = scope.receiver
    values = [a.value if isinstance(a, ast.Starred) else a for a in [*call.args, *(k.value for k in call.keywords)]]
    paths = [object_path(v) for v in values if not isinstance(v, ast.Call)]
    return frozenset(p.partition(".")[2].split(".*")[0] or "*" for p in paths if p and p.partition(".")[0] == receiver)


def _reached(call: ast.Call, scope: Scope) -> bool:
    """``call`` runs a function of the module, or one it imports (of the run or not)."""
    functions = scope.functions
    if not isinstance(functions, ModuleFunctions) or call.func.id in functions:  # type: ignore[attr-defined]
        return True
    return functions.reached(call, scope.owner, scope.receiver) is not None
