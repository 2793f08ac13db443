"""Which ATen op a call's spelling runs, and which tensor is its ``self``: what the op writes and views then comes
from its schema (``Tensor(a!) self``, ``Tensor(a) self -> Tensor(a)``: ``schema.py``), however the op is reached.

Python's augmented assignment ``x += y`` calls ``x.__iadd__(y)``; torch binds these methods to its in-place ops
(``variable_methods`` in torch's ``python_variable_methods.cpp``: ``__iadd__`` is ``add_``, ``__imul__`` ``mul_``,
``__isub__`` ``sub_``, ``__idiv__`` ``div_``, ``__ifloordiv__`` ``floor_divide_``, ``__imod__`` ``remainder_``;
``torch/_tensor.py``: ``__itruediv__`` is ``__idiv__``, ``__ipow__`` is ``pow_``), so ``x.__iadd__(1)`` writes
``x`` as ``x.add_(1)`` does. The bitwise ones (``__iand__``, ``__ior__``, ``__ixor__``, ``__ilshift__``,
``__irshift__``) are ATen ops of their own, in the table under their names. ``tests/flow/test_aten_forms.py``
runs each method of the pinned torch under a dispatch mode and checks the op it dispatches.

A function form takes the op's ``self`` first: ``torch.relu_(x)``, the unbound method ``torch.Tensor.add_(x, 1)``
(``th.Tensor.add_`` through an import alias: the module's imports, read once per module, ``torch_callees.py``), an
in-place op of ``torch.nn.functional`` (``F.relu_`` is ``torch.relu_``); ``torch.narrow(x, 0, 0, 2)`` is a view of
``x``, not of the module it is reached through.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from codegen.index.scan import dotted_name
from codegen.lower.flow import schema
from codegen.lower.flow.torch_callees import torch_callee

__all__ = ["DUNDER_OPS", "aten_function", "aten_name", "function_form"]

_TORCH = ("torch",)
_TENSOR = ("torch", "Tensor")  # the unbound methods: ``torch.Tensor.add_(x, 1)`` is ``x.add_(1)``
_FUNCTIONAL = ("torch", "nn", "functional")  # its in-place ops are torch's own (``F.relu_`` is ``torch.relu_``)
_SELF = ("self", "input", "tensor")  # the first argument's names, passed by keyword

DUNDER_OPS: dict[str, str] = {
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__idiv__": "div_",
    "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
}


def aten_name(method: str) -> str:
    """The ATen op a tensor method named ``method`` runs: its in-place op for an operator method, else its name."""
    return DUNDER_OPS.get(method, method)


def aten_function(dotted: Sequence[str]) -> str | None:
    """The ATen op the torch function ``dotted`` (resolved through the module's imports: ``th.Tensor.view`` is
    ``("torch", "Tensor", "view")``) runs with its first argument as ``self``: ``torch.<op>``, the unbound method
    ``torch.Tensor.<method>`` (an operator method's op), an in-place op of ``torch.nn.functional``; None for any
    other (a Python function of ``torch.nn.functional`` takes its input as no ATen ``self``)."""
    *module, name = dotted
    if tuple(module) == _TORCH:
        return name
    if tuple(module) == _TENSOR:
        return aten_name(name)
    return name if tuple(module) == _FUNCTIONAL and schema.writes_self(name) else None


def function_form(call: ast.Call) -> tuple[tuple[str, ...], ast.expr | None] | None:
    """The path and the ``self`` (its first argument) of a call of torch's function form spelled from ``torch``
    itself (``torch.narrow(x, 0, 0, 2)``: ``(("torch", "narrow"), x)``; ``torch.Tensor.add_(x, 1)``, ``torch.nn.init.
    zeros_(w)``) or reached through an import alias (``th.narrow(x, 0, 0, 2)``, ``nw(x, 0, 0, 2)`` after ``from torch
    import narrow as nw``: the mark ``torch_callees.py`` left when the module was parsed); None for a method of a
    value (``x.narrow(0, 0, 2)``: the module it is reached through is no tensor)."""
    func, path = call.func, torch_callee(call)
    chain = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
    if path is None and isinstance(func, ast.Attribute) and chain and chain.split(".")[0] == _TORCH[0]:
        path = (*chain.split("."), func.attr)
    if path is None:
        return None
    first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in _SELF), None)
    return path, first


def function_view(call: ast.Call) -> ast.expr | None:
    """What torch's function form of a view op returns a view of: ``x`` of ``torch.narrow(x, 0, 0, 2)``,
    ``torch.Tensor.view(x, -1)`` (by the op's ATen schema, ``schema.aliases_self``)."""
    form = function_form(call)
    return form[1] if form is not None and schema.aliases_self(aten_function(form[0]) or "") else None
