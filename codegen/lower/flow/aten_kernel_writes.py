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

from codegen.lower.flow.view_roots import alias_sources

__all__ = ["kernel_writes"]

_Param = tuple[int | None, bool]  # its position (None: by keyword only), whether its default is None or False
_Entry = tuple[dict[str, _Param], list[tuple[str, tuple[str, ...]]]]  # params named; (written, guards) each


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
        if (arg := _passed(call, written, params[written])) is not None
        and all(_given(call, g, params[g]) for g in guards)
    ]
    return frozenset().union(*(alias_sources(arg) for arg in found))


def _passed(call: ast.Call, name: str, param: _Param) -> ast.expr | None:
    position = param[0]
    if position is not None and position < len(call.args):
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == name), None)


def _given(call: ast.Call, name: str, param: _Param) -> bool:
    """The call gives ``name`` a value that may be neither None nor False (left out: its default)."""
    arg = _passed(call, name, param)
    if arg is None:
        return not param[1]
    return not (isinstance(arg, ast.Constant) and arg.value in (None, False))


@functools.cache
def _table() -> dict[str, _Entry]:
    """The table read into entries (on the first question)."""
    from codegen.lower.flow.aten_kernel_writes_table import KERNEL_WRITES

    return {name: _entry(text) for name, text in KERNEL_WRITES.items()}


def _entry(text: str) -> _Entry:
    named, _, written = text.partition(" | ")
    params: dict[str, _Param] = {}
    for word in named.split():
        name, _, position = word.rstrip("=").partition("@")
        params[name] = (int(position) if position else None, word.endswith("="))
    return params, [(item.split(":")[0], tuple(item.split(":")[1:])) for item in written.split()]
