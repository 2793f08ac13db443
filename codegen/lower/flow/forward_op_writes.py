"""Which of its inputs a torch module's ``forward`` writes in place by an op of its own, not through
``torch.nn.functional``: ``input.add_(1)``, ``input.clamp_(0)``, ``torch.relu_(input)``, ``input += b``,
``input[0] = v``, ``torch.mul(a, b, out=input)``, on the parameter or a view of it, in ``forward`` or in a method
of the object or a function of its file that ``forward`` hands it to.

What an op writes is its ATen schema's (``Tensor(a!) self``: ``written_exprs.writes_in_place``), read by the
reading every function of the run gets (``param_writes.py``: views through ``view_roots.py``, calls of the object's
methods, along its bases, and of its file's functions followed); an op of another module of torch (an autograd
``Function``'s ``apply``, a ``torch.library`` op) is not followed. Such a write needs no constructor argument: the
row is ``input@0``. ``torch_layer_writes_build.py`` adds these to what ``functional_input_writes.py`` finds. The
torch it is pinned to has no such layer: every in-place op a ``forward`` there runs writes a tensor the ``forward``
made (``AdaptiveLogSoftmaxWithLoss``'s ``output.index_copy_``) or the module's own state (``_BatchNorm``'s
``num_batches_tracked.add_(1)``, ``torch_module_methods_table.py``); ``tests/flow/test_torch_layer_op_writes.py``
checks this against the installed torch.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.lower.flow.param_writes import param_writes
from codegen.lower.flow.torch_module_sources import TorchClass, inherited_method

__all__ = ["forward_op_writes"]


def forward_op_writes(classes: Mapping[str, TorchClass], cls: str) -> list[str]:
    """Each parameter of ``cls``'s ``forward`` it writes by an op of its own (see above), as ``input@0`` (its
    position after the object); sorted."""
    found = inherited_method(classes, cls, "forward")
    if found is None:
        return []
    home, forward = found
    params = [a.arg for a in forward.args.args][1:]
    written = param_writes(forward, params, _functions(classes, cls, home), cls)
    return sorted(f"{p}@{params.index(p)}" for p in written if p in params)


def _functions(classes: Mapping[str, TorchClass], cls: str, home: str) -> dict[str, ast.FunctionDef]:
    """The functions a call in ``forward`` may run: the top-level functions of the file defining it, and each
    method an object of ``cls`` has (``Class.method``, as ``param_writes`` names them), wherever its bases define
    it."""
    names = {name for c in classes.values() for name in c.methods}
    methods = {f"{cls}.{n}": m[1] for n in names if (m := inherited_method(classes, cls, n)) is not None}
    return {**classes[home].file.functions, **methods}
