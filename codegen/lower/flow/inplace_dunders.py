"""The ATen op each in-place operator method of ``torch.Tensor`` runs, so that ``x.__iadd__(y)`` writes ``x`` as
``x.add_(y)`` does: by the schema of the op it reaches (``Tensor(a!) self``, ``schema.py``).

Python's augmented assignment ``x += y`` calls ``x.__iadd__(y)``; torch binds these methods to its in-place ops
(``variable_methods`` in torch's ``python_variable_methods.cpp``: ``__iadd__`` is ``add_``, ``__imul__`` ``mul_``,
``__isub__`` ``sub_``, ``__idiv__`` ``div_``, ``__ifloordiv__`` ``floor_divide_``, ``__imod__`` ``remainder_``;
``torch/_tensor.py``: ``__itruediv__`` is ``__idiv__``, ``__ipow__`` is ``pow_``). The bitwise ones
(``__iand__``, ``__ior__``, ``__ixor__``, ``__ilshift__``, ``__irshift__``) are ATen ops of their own, in the
table under their names. ``tests/flow/test_inplace_dunders.py`` runs each method of the pinned torch and checks
the op it dispatches.
"""

from __future__ import annotations

__all__ = ["DUNDER_OPS", "aten_name"]

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
