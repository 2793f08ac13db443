"""Which of its inputs a torch module's ``forward`` writes in place through ``torch.nn.functional``, and under which
constructor argument.

``nn.ReLU(inplace=True)``: its ``forward`` is ``F.relu(input, inplace=self.inplace)``, and ``F.relu`` writes
``input`` where ``inplace`` is given (``torch_functional.py``, read from torch's body and runs); ``__init__`` stores
``self.inplace = inplace``. So the layer writes the tensor its caller hands it where its constructor is given
``inplace`` (``input@0:inplace@0=``: the forward's first parameter after the object, where ``__init__``'s
parameter ``inplace``, first after the object, is given something but None or False; ``=``: its default is None or
False). ``nn.ReLU()`` writes nothing. A guard that is no parameter stored whole (``self.training``) is left to the
run: the write is taken to happen. ``torch_layer_writes_build.py`` reads this into the table; the same reading of
a module's own state is ``functional_state_writes.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.index.scan import dotted_name
from codegen.lower.flow.functional_state_writes import stored_param
from codegen.lower.flow.torch_functional import guarded_writes
from codegen.lower.flow.view_roots import alias_root

__all__ = ["functional_input_writes"]

_FUNCTIONAL = ("F", "functional")  # how ``torch.nn.modules`` names ``torch.nn.functional``


def functional_input_writes(fn: ast.FunctionDef, inits: Sequence[ast.FunctionDef]) -> list[str]:
    """Each parameter of ``fn`` a call of ``torch.nn.functional`` in it may write, as ``input@0``, followed by
    ``:max_norm@2=`` where a constructor parameter must be given for it (see above); sorted, once each."""
    own = fn.args.args[0].arg if fn.args.args else ""
    params = [a.arg for a in fn.args.args][1:]
    init = inits[0] if inits else None
    found: set[str] = set()
    for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
        dotted = (dotted_name(call.func) or "").split(".")
        if len(dotted) != 2 or dotted[0] not in _FUNCTIONAL:
            continue
        for arg, guards in guarded_writes(call, ("torch", "nn", "functional", dotted[1])):
            root = alias_root(arg)
            if root in params:
                needed = next((p for g in guards if (p := stored_param(g, own, init))), "")
                found.add(f"{root}@{params.index(root)}" + (f":{needed}" if needed else ""))
    return sorted(found)
