"""Which of a caller's names each of its statements writes in place through a helper of its module.

``bump(x)``, where the module's ``def bump(t): t.add_(1)`` writes its parameter, writes ``x`` as surely as
``x.add_(1)`` does: a call on another stream still reading ``x`` must be joined before it, and a later call
that reads ``x`` cannot wait for a record made before it. The statement's own spelling says nothing of that
(``writes.inplace_writes``); the helper's body does (``param_writes.py``: a function of the module, or a method of
the caller's object, one call after another). A function, a submodule or an attribute's method of another module
of the run is read in that module, and a call the run cannot read may write its arguments (``imported_writes.py``).
"""

from __future__ import annotations

import ast

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.header_statements import header_statements
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions
from codegen.lower.flow.param_writes import call_writes

__all__ = ["helper_writes", "stream_call_writes"]


def helper_writes(
    tree: ast.Module,
    qualname: str,
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    receiver: str | None,
    run: tuple[object, str] | None = None,
) -> dict[ast.stmt, frozenset[str]]:
    """Each statement of ``fn`` (the function ``qualname`` of ``tree``) that is not compound, and each compound
    statement's header (``header_statements.py``: ``for _ in bump(y):``) -> the names its
    calls of the module's helpers write in place, and, given ``run`` (the run's index and the module's run key),
    those of the run's other modules, of its objects' attributes, and of what the run cannot read
    (``imported_writes.py``); statements that write none are left out."""
    functions = scan.functions_by_qualname(tree) if run is None else module_functions(run[0], run[1], tree)
    owner = (qualname.rpartition(".")[0] or None) if receiver is not None else None
    found: dict[ast.stmt, frozenset[str]] = {}
    for stmt in walked_of(fn, ast.stmt):
        # a compound statement: its simple statements are judged one by one, its header as one of its own
        for plain in header_statements(stmt) if hasattr(stmt, "body") else (stmt,):
            names = frozenset().union(*(call_writes(c, functions, owner, receiver) for c in walked_of(plain, ast.Call)))
            if names:
                found[plain] = names
    return found


def stream_call_writes(
    functions: ModuleFunctions, qualname: str, receiver: str | None, call: ast.Call
) -> frozenset[str]:
    """The caller's names a call of a stream function in ``qualname`` (of the module whose functions are
    ``functions``) writes in place, read through every module of the run its body reaches (``bump(x)`` imported
    from ``helpers.py``, or from a module the run cannot read): the index's own fact (``CalleeInfo.writes``)
    reads the callee's module alone, before the run is indexed."""
    owner = (qualname.rpartition(".")[0] or None) if receiver is not None else None
    return frozenset(call_writes(call, functions, owner, receiver))
