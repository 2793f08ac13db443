"""Which statements can issue no work on a side stream: only torch ops, tensor methods and code of this module.

A side stream allocates again only when some code switches to it. Code that calls nothing but ``torch.*``
functions, methods of certain tensors, torch.nn layers the class's ``__init__`` assigns, builtins, and
functions or methods of this module that in turn call only such things, switches to no stream. Anything else
(a submodule of another class, a function of another module, a local that may hold a module) may run a stream
function somewhere, transformed in another run: it counts as issuing work on every stream.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import Tensorness, signature_of
from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.flow.tensor_bindings import certain_tensors
from codegen.lower.flow.tensors import Returns, is_tensor_expr

__all__ = ["StreamFree"]

_BUILTINS = frozenset(
    {"len", "range", "int", "float", "bool", "min", "max", "abs", "isinstance", "tuple", "list", "dict", "zip"}
    | {"enumerate", "getattr", "hasattr", "sum", "round", "print", "super"}
)
_TORCH = frozenset({"torch", "F", "math"})


@attrs.define(eq=False)
class StreamFree:
    """The calls of one module's functions, judged once each."""

    tree: ast.Module
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = attrs.field(init=False)
    judged: dict[str, bool] = attrs.Factory(dict)
    contexts: dict[str, tuple[str | None, Returns, set[str]]] = attrs.Factory(dict)  # per function, made once

    def __attrs_post_init__(self) -> None:
        self.functions = scan.functions_by_qualname(self.tree)

    def statement(self, stmt: ast.AST, qualname: str) -> bool:
        """``stmt`` of the function ``qualname`` issues work on no stream but the caller's."""
        fn = self.functions.get(qualname)
        if fn is None:
            return False
        if qualname not in self.contexts:
            self.contexts[qualname] = self._context(fn, qualname)
        receiver, returns, known = self.contexts[qualname]
        calls = walked_of(stmt, ast.Call)
        return all(self._call(call, qualname, receiver, returns, known) for call in calls)

    def function(self, qualname: str) -> bool:
        if qualname not in self.judged:
            self.judged[qualname] = False  # recursion: judged not free until shown free
            fn = self.functions[qualname]
            self.judged[qualname] = all(self.statement(stmt, qualname) for stmt in fn.body)
        return self.judged[qualname]

    def _context(
        self, fn: ast.FunctionDef | ast.AsyncFunctionDef, qualname: str
    ) -> tuple[str | None, Returns, set[str]]:
        """The function's receiver, the returns its calls can see, and its names certainly holding a tensor."""
        method = "." in qualname
        receiver = fn.args.args[0].arg if method and fn.args.args else None
        returns = local_returns(self.tree, qualname, receiver)
        known = set(certain_tensors(fn, method=method, returns=returns).values())
        known |= {p.name for p in signature_of(fn, method=method).params if p.tensor is Tensorness.TENSOR}
        return receiver, returns, known

    def _call(self, call: ast.Call, qualname: str, receiver: str | None, returns: Returns, known: set) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in _BUILTINS or (func.id in self.functions and self.function(func.id))
        if not isinstance(func, ast.Attribute):
            return False
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in _TORCH and root.id not in known:
            return True
        if isinstance(func.value, ast.Name) and func.value.id == receiver:
            method = f"{qualname.rpartition('.')[0]}.{func.attr}"
            if method in self.functions:
                return self.function(method)
            return ast.unparse(func) in returns  # a torch.nn layer ``__init__`` assigns
        return is_tensor_expr(func.value, known, returns)
