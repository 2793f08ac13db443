"""Which constructor arguments make a torch module's method write its own state through an in-place tensor method.

``nn.BatchNorm1d(3, track_running_stats=False)``'s ``forward`` (``_BatchNorm.forward``) runs
``self.num_batches_tracked.add_(1)`` under ``if self.training and self.track_running_stats``, and hands
``self.running_mean if not self.training or self.track_running_stats else None`` to ``F.batch_norm``, which updates it
in place; but ``_NormBase.__init__`` registers ``num_batches_tracked``, ``running_mean`` and ``running_var`` as None
unless ``track_running_stats``, and a write through None writes nothing. So a call of a tensor method whose ATen
schema writes ``self`` (``schema.writes_self``: ``add_``) on an attribute of the method's own object writes only where
the constructor gives the parameter that makes the attribute a tensor (``state_made_none.tensor_needs``:
``track_running_stats@4``), as ``F.batch_norm``'s and ``F.instance_norm``'s writes of the same attributes do
(``functional_state_writes.py``). Nothing here assumes eval: ``self.training`` is the module's state at run time, so
where the tests that guard the write read it (``if self.training and ...``) the write stands, as ``F.dropout(x,
training=self.training, inplace=True)`` writes ``x`` (``torch_functional.py``: a guard holds unless the call gives a
literal None or False); only the constructor's argument, read where the module is built, can rule it out. So
``nn.BatchNorm1d(3)`` writes its running stats and ``num_batches_tracked`` (it may be training),
``nn.BatchNorm1d(3, track_running_stats=False)`` writes nothing. ``torch_module_methods_build.py`` asks at
table-build time (``w:track_running_stats@4``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.lower.flow import schema
from codegen.lower.flow.functional_state_writes import functional_state_writes
from codegen.lower.flow.state_made_none import guard_text, tensor_needs

__all__ = ["method_state_writes", "state_writes"]


def method_state_writes(fn: ast.FunctionDef, inits: Sequence[ast.FunctionDef]) -> dict[int, str]:
    """Each call in ``fn`` of an in-place tensor method on an attribute of its own object that ``__init__`` leaves
    None unless a constructor parameter is given: the call's ``id`` -> that parameter (``track_running_stats@4``).
    ``inits``: the ``__init__`` bodies the object runs, its own first (``state_made_none.init_chain``)."""
    own = fn.args.args[0].arg if fn.args.args else ""
    found: dict[int, str] = {}
    for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
        func = call.func
        in_place = isinstance(func, ast.Attribute) and schema.writes_self(func.attr)
        attr = _own_attr(func.value, own) if in_place and isinstance(func, ast.Attribute) else None
        needed = tensor_needs(inits, attr) if attr is not None else None
        if needed is not None:
            found[id(call)] = guard_text(needed)
    return found


def state_writes(fn: ast.FunctionDef, inits: Sequence[ast.FunctionDef]) -> list[str] | None:
    """The ways ``fn`` writes its own object's state that need a constructor parameter: through ``torch.nn.functional``
    (``functional_state_writes``; ``""``: none needed) and through in-place methods (above); None where neither
    does."""
    found = [*(functional_state_writes(fn, inits) or []), *method_state_writes(fn, inits).values()]
    return found or None


def _own_attr(node: ast.expr, own: str) -> str | None:
    """``attr`` of ``self.attr``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == own:
        return node.attr
    return None
