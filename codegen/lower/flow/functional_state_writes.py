"""Which constructor arguments make a torch module's method write its own state through ``torch.nn.functional``.

``nn.Embedding(4, 3, max_norm=1.0)``: its ``forward`` is ``F.embedding(input, self.weight, self.padding_idx,
self.max_norm, ...)``, and ``F.embedding`` renorms ``weight`` in place when ``max_norm`` is given
(``torch_functional.py``); ``__init__`` stores ``self.max_norm = max_norm``. So the module's ``forward`` writes its
``weight`` where its constructor is given ``max_norm`` (not None), and an ``nn.Embedding(4, 3)`` writes nothing.
``torch_module_methods_build.py`` reads this for each method of ``torch.nn.modules`` into the table
(``w:max_norm@2=``: writes where ``__init__``'s parameter ``max_norm``, third after the object, is given; ``=``: its
default is None or False); ``torch_module_methods.py`` answers for a module made by a call it can read. A guard that
is no parameter stored whole (``self.max_norm = max_norm``) leaves the write unconditional, unless the state
written is None where the constructor is not given a parameter (``nn.InstanceNorm1d(3)``'s ``running_mean``,
registered None unless ``track_running_stats``: ``state_made_none.py``): then the write needs that one
(``w:track_running_stats@4=``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.index.scan import dotted_name
from codegen.lower.flow.state_made_none import tensor_needs
from codegen.lower.flow.torch_functional import guarded_writes
from codegen.lower.flow.view_roots import alias_parts, alias_root

__all__ = ["functional_state_writes", "stored_param"]

_FUNCTIONAL = ("F", "functional")  # how ``torch.nn.modules`` names ``torch.nn.functional``


def functional_state_writes(fn: ast.FunctionDef, inits: Sequence[ast.FunctionDef]) -> list[str] | None:
    """The ways a call of ``torch.nn.functional`` in ``fn`` writes its own object's state: each the ``__init__``
    parameter (``max_norm@2=``) that must be given, ``""`` where none must; None where no call writes it. ``inits``:
    the ``__init__`` bodies the object runs, its own first (``state_made_none.init_chain``)."""
    own = fn.args.args[0].arg if fn.args.args else ""
    init = inits[0] if inits else None
    found: list[str] = []
    for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
        dotted = (dotted_name(call.func) or "").split(".")
        if len(dotted) == 2 and dotted[0] in _FUNCTIONAL:
            writes = guarded_writes(call, ("torch", "nn", "functional", dotted[1]))
            for arg, guards in ((p, g) for a, g in writes for p in alias_parts(a) if alias_root(p) == own):  # each arm
                found.append((stored_param(guards[0], own, init) if guards else "") or _tensor_needs(arg, own, inits))
    return found or None


def _tensor_needs(arg: ast.expr, own: str, inits: Sequence[ast.FunctionDef]) -> str:
    """``self.running_mean``, None unless ``__init__``'s ``track_running_stats``: ``track_running_stats@4=``."""
    attr = arg.attr if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) else None
    needed = tensor_needs(inits, attr) if attr is not None and arg.value.id == own else None  # type: ignore[attr-defined]
    return f"{needed[0]}@{needed[1]}" + "=" * needed[2] if needed is not None else ""


def stored_param(arg: ast.expr, own: str, init: ast.FunctionDef | None) -> str:
    """``self.max_norm`` stored whole from ``__init__``'s parameter: ``max_norm@<position>`` (``=``: falsy default)."""
    if not (isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) and arg.value.id == own) or not init:
        return ""
    stores = [s for s in ast.walk(init) if isinstance(s, ast.Assign) and len(s.targets) == 1]
    held = [s.value for s in stores if isinstance(s.targets[0], ast.Attribute) and s.targets[0].attr == arg.attr]
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    if len(held) != 1 or not isinstance(held[0], ast.Name) or held[0].id not in params:
        return ""
    name = held[0].id
    defaults = dict(zip(params[len(params) - len(init.args.defaults) :], init.args.defaults, strict=True))
    falsy = isinstance(defaults.get(name), ast.Constant) and defaults[name].value in (None, False)  # type: ignore[attr-defined]
    return f"{name}@{params.index(name)}" + "=" * falsy
