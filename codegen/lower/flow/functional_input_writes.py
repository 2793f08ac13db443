"""Which of its inputs a torch module's ``forward`` writes in place through ``torch.nn.functional``, and under which
constructor argument.

``nn.ReLU(inplace=True)``: its ``forward`` is ``F.relu(input, inplace=self.inplace)``, and ``F.relu`` writes
``input`` where ``inplace`` is given (``torch_functional.py``, read from torch's body and runs); ``__init__`` stores
``self.inplace = inplace``. So the layer writes the tensor its caller hands it where its constructor is given
``inplace`` (``input@0:inplace@0=``: the forward's first parameter after the object, where ``__init__``'s
parameter ``inplace``, first after the object, is given something but None or False; ``=``: its default is None or
False). ``nn.ReLU()`` writes nothing. The attribute may be stored by a base's ``__init__``: ``nn.ReLU6``'s
``forward`` is ``Hardtanh``'s, whose ``__init__`` stores ``self.inplace = inplace``, reached from ``ReLU6.__init__``
by ``super().__init__(0.0, 6.0, inplace)``; the one ``__init__`` of the chain that stores the attribute must store it
whole from its parameter, which each ``super().__init__(...)`` on the way passes on by name
(``state_made_none.passed_down``): the row then names the first ``__init__``'s parameter (``input@0:inplace@0=``),
so ``nn.ReLU6()`` writes nothing and ``nn.ReLU6(True)`` its input. A guard that is no parameter stored whole
(``self.training``, the module's mode, which ``eval()`` sets and no constructor argument decides) is left to the
run: the write is taken to happen. ``torch_layer_writes_build.py`` reads this into the table; the same reading of
a module's own state is ``functional_state_writes.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.index.scan import dotted_name
from codegen.lower.flow.functional_state_writes import stored_param
from codegen.lower.flow.state_made_none import passed_down
from codegen.lower.flow.torch_functional import guarded_writes
from codegen.lower.flow.view_roots import alias_root

__all__ = ["functional_input_writes"]

_FUNCTIONAL = ("F", "functional")  # how ``torch.nn.modules`` names ``torch.nn.functional``
_SETATTR = ("setattr", "__setattr__")


def functional_input_writes(fn: ast.FunctionDef, inits: Sequence[ast.FunctionDef]) -> list[str]:
    """Each parameter of ``fn`` a call of ``torch.nn.functional`` in it may write, as ``input@0``, followed by
    ``:max_norm@2=`` where a constructor parameter must be given for it (see above); sorted, once each."""
    own = fn.args.args[0].arg if fn.args.args else ""
    params = [a.arg for a in fn.args.args][1:]
    found: set[str] = set()
    for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
        dotted = (dotted_name(call.func) or "").split(".")
        if len(dotted) != 2 or dotted[0] not in _FUNCTIONAL:
            continue
        for arg, guards in guarded_writes(call, ("torch", "nn", "functional", dotted[1])):
            root = alias_root(arg)
            if root in params:
                needed = next((p for g in guards if (p := _constructor_flag(g, own, inits))), "")
                found.add(f"{root}@{params.index(root)}" + (f":{needed}" if needed else ""))
    return sorted(found)


def _constructor_flag(guard: ast.expr, own: str, inits: Sequence[ast.FunctionDef]) -> str:
    """The parameter of ``inits[0]`` (``inplace@0=``) whose value ``guard`` (``self.inplace``) holds: the one
    ``__init__`` of the chain that stores the attribute stores it whole from its parameter, and each
    ``super().__init__(...)`` on the way passes that parameter on (``state_made_none.passed_down``); "" else."""
    attr = guard.attr if isinstance(guard, ast.Attribute) else ""
    storing = [depth for depth, init in enumerate(inits) if attr and _stores(init, attr)]
    stored = stored_param(guard, own, inits[storing[0]]) if len(storing) == 1 else ""
    if not stored or storing[0] == 0:
        return stored
    needed = passed_down(inits[: storing[0] + 1], stored.partition("@")[0])
    return f"{needed[0]}@{needed[1]}" + "=" * needed[2] if needed is not None else ""


def _stores(init: ast.FunctionDef, attr: str) -> bool:
    """``init`` binds an attribute named ``attr``: ``x.attr = ...`` (any target), or ``setattr``/``__setattr__``
    with that name."""
    for node in ast.walk(init):
        if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.Call) and _called_name(node.func) in _SETATTR:
            if any(isinstance(a, ast.Constant) and a.value == attr for a in node.args):
                return True
    return False


def _called_name(func: ast.expr) -> str:
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
