"""What a call of one of ``torch``'s own functions writes through slots its ATen schema leaves plain.

``torch.batch_norm(h, w, b, self.rm, self.rv, True, 0.1, 1e-5, False)`` updates ``self.rm`` and ``self.rv`` in place,
though ATen's ``batch_norm`` schema marks no argument ``Tensor(a!)``: its kernel writes them. Which function writes
which argument, under which given parameters, was found by running them (``aten_kernel_probe.py``, the table
``aten_kernel_writes_table.py``): ``batch_norm`` and ``native_batch_norm`` write ``running_mean`` and
``running_var`` where ``training`` is given, ``instance_norm`` where ``use_input_stats`` is, ``batch_norm_update_stats``
always. A guard holds where the call gives it anything but a literal None or False (``training=self.training`` may
be True: nothing here assumes eval); ``training=False`` writes nothing. A call spreading ``*args`` or ``**kwargs``
into such a function may write any argument. ``foreign_writes.py`` adds these writes to the schema's, for
``torch.<name>`` and for the op called by its default overload (``torch.ops.aten.batch_norm.default``).
"""

from __future__ import annotations

import ast
import functools

from codegen.lower.flow.call_arguments import passed_argument
from codegen.lower.flow.guarded_rows import Entry, given, row_entry
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["kernel_writes"]


def kernel_writes(call: ast.Call, op: str) -> frozenset[str]:
    """The caller's names whose memory ``call`` of ``torch``'s function ``op`` writes through plain slots (see
    above); none for a function the table does not hold."""
    entry = _table().get(op)
    if entry is None:
        return frozenset()
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return frozenset().union(*(alias_sources(v) for v in [*call.args, *(k.value for k in call.keywords)]))
    params, writes = entry
    found = [
        arg
        for written, guards in writes
        if (arg := passed_argument(call, written, params[written][0])) is not None
        and all(given(call, g, params[g]) for g in guards)
    ]
    return frozenset().union(*(alias_sources(arg) for arg in found))


@functools.cache
def _table() -> dict[str, Entry]:
    """The table read into entries (on the first question)."""
    from codegen.lower.flow.aten_kernel_writes_table import KERNEL_WRITES

    return {name: row_entry(text) for name, text in KERNEL_WRITES.items()}
