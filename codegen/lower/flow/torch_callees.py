"""Which torch function a call names through its module's imports: ``th.narrow(h, 0, 0, 2)`` after ``import torch
as th`` is ``torch.narrow``, ``nw(h, 0, 0, 1)`` after ``from torch import narrow as nw`` too.

What a call of torch's function form views or writes comes from the op's ATen schema (``aten_forms.py``), and its
``self`` is its first argument. Read by spelling alone, ``th.narrow(h, 0, 0, 2).add_(1)`` wrote ``th`` (the module
it is reached through), not ``h``: the write was missed while a side call read ``h`` (a race the checker reports).
The readers of views and writes (``view_roots.view_base``, ``written_exprs.call_written``) are asked of one
expression, with no module at hand; so each module is read once when it is parsed (``codegen/driver/pyast.py``): a
call whose callee is a name, or a chain of attributes under a name, that an import binds to torch or under it
(``import_chains.absolute_imports``: top-level imports, and those inside functions) is marked with the path it names
(``("torch", "narrow")``), and ``aten_forms.function_form`` reads the mark. A name the module also binds another way
(a parameter, an assignment, a loop target, anywhere) is no certain import: its calls keep their spelling's reading.
A call spelled from ``torch`` itself needs no mark.
"""

from __future__ import annotations

import ast

from codegen.index.walked import walked_of
from codegen.lower.flow.import_chains import absolute_imports, call_chain

__all__ = ["mark_torch_callees", "torch_callee"]

_MARK = "_npudsl_torch_callee"  # on a call node: the torch path its callee names through an import
_TORCH = "torch"
_BINDING = (ast.arg, ast.Name, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def mark_torch_callees(tree: ast.Module) -> ast.Module:
    """``tree``, each call of it that reaches torch through an import alias marked with the path it names."""
    aliases = _torch_aliases(tree)
    if not aliases:
        return tree
    for call in walked_of(tree, ast.Call):
        chain = call_chain(call.func)
        if chain is not None and chain[0] in aliases:
            call.__dict__[_MARK] = (*aliases[chain[0]], *chain[1:])
    return tree


def torch_callee(call: ast.Call) -> tuple[str, ...] | None:
    """The torch path ``call``'s callee names through an import alias (``("torch", "narrow")`` of ``th.narrow(h,
    0, 0, 2)``); None where it is spelled from ``torch`` itself, or reaches no torch function."""
    return call.__dict__.get(_MARK)


def _torch_aliases(tree: ast.Module) -> dict[str, tuple[str, ...]]:
    """The names the module's imports bind to torch or under it (but ``torch`` itself), none bound otherwise too."""
    if not any(_aliases_torch(node) for node in walked_of(tree, (ast.Import, ast.ImportFrom))):
        return {}  # most modules spell ``torch.`` alone: no import to resolve
    found = {
        local: named
        for local, named in absolute_imports(tree, "").items()
        if named is not None and named[0] == _TORCH and (local, named) != (_TORCH, (_TORCH,))
    }
    if not found:
        return {}
    bound = _bound_otherwise(tree)
    return {local: named for local, named in found.items() if local not in bound}


def _aliases_torch(node: ast.AST) -> bool:
    """Whether an import binds a name other than ``torch`` to torch or under it."""
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").partition(".")[0] == _TORCH
    return isinstance(node, ast.Import) and any(a.name.partition(".")[0] == _TORCH and a.asname for a in node.names)


def _bound_otherwise(tree: ast.Module) -> set[str]:
    """The names the module binds by anything but an import: parameters, stores, deletions, definitions."""
    found: set[str] = set()
    for node in walked_of(tree, _BINDING):
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name):
            found.update([node.id] if not isinstance(node.ctx, ast.Load) else [])
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
    return found
