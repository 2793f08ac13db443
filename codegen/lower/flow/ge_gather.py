"""GE: a gather out of a buffer by a tensor of indices is an op of the caller's stream, as a call is.

``cos, sin = self.cos_cached[positions], self.sin_cached[positions]`` makes its values with two index ops
(``aten.index`` in the graph torchair converts); a side call that reads ``cos`` and ``sin`` waits for them by data,
and so after all the caller's work before them, as it does after a call's result (``ge_reads.py``). An index by
anything else may be a view (``x[0]``, ``x[:n]``), which makes nothing on any stream: it stays no answer. The index
must be a tensor for certain (``ge_returned.tensor_names``: a parameter annotated ``torch.Tensor`` that the
function never rebinds, or a name ``tensors.py`` finds certain).
"""

from __future__ import annotations

import ast

__all__ = ["binds_gathers"]


def binds_gathers(stmt: ast.stmt, tensors: frozenset[str]) -> bool:
    """``a = buf[idx]`` or ``a, b = x[idx], y[idx]``: each name the statement binds holds a gather by a tensor."""
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return _gather(value, tensors)
    if not isinstance(target, ast.Tuple) or not isinstance(value, ast.Tuple) or len(target.elts) != len(value.elts):
        return False
    return all(isinstance(t, ast.Name) and _gather(v, tensors) for t, v in zip(target.elts, value.elts))


def _gather(value: ast.expr, tensors: frozenset[str]) -> bool:
    return isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Name) and value.slice.id in tensors
