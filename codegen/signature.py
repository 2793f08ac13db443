"""What a decorated body's signature and returns say, for targets that order through tensors (GE)."""

from __future__ import annotations

import ast

__all__ = ["required_tensor_inputs", "returns_value", "tensor_inputs"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_SCALARS = frozenset({"int", "float", "bool", "str", "bytes", "None"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def tensor_inputs(fn: _Function, *, method: bool) -> tuple[str, ...]:
    """Parameters that may carry tensors: not the receiver, ``*args``/``**kwargs``, scalar annotations
    or literal (non-None) defaults."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = list(zip(positional, defaults))[1 if method else 0:] + list(zip(args.kwonlyargs, args.kw_defaults))
    return tuple(arg.arg for arg, default in pairs if not _scalar(arg, default))


def required_tensor_inputs(fn: _Function, *, method: bool) -> tuple[str, ...]:
    """The tensor inputs that have no default, so every call passes a value (never a default None)."""
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    required = positional[1 if method else 0:len(positional) - len(args.defaults)]
    required += [arg for arg, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
    return tuple(arg.arg for arg in required if not _scalar(arg, None))


def _scalar(arg: ast.arg, default: ast.expr | None) -> bool:
    annotation = arg.annotation
    if isinstance(annotation, ast.Name) and annotation.id in _SCALARS:
        return True
    if isinstance(annotation, ast.Constant) and annotation.value in _SCALARS:
        return True
    return isinstance(default, ast.Constant) and default.value is not None


def returns_value(fn: _Function) -> bool:
    """Whether some ``return`` of the body (not of a nested scope) gives a value other than None."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                return True
        if not isinstance(node, _SCOPES):
            stack.extend(ast.iter_child_nodes(node))
    return False
