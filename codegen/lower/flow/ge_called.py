"""GE: which element of a tuple that a recording body's last call returns is made last, so that an event orders on it.

``@records("e")`` on a body that ends ``return dispatch(x, ids, n)`` (or ``out = dispatch(...)``, ``return out``)
hands its caller the tuple that ``dispatch`` displays: ``return rows, ids, torch.bincount(ids, minlength=n)``. The
body's last work is that call, and the call's last work is the op that makes the element after which every element
is a name (``flow/ge_returned.py`` reads the callee's body as it reads a recording body), here ``bincount``: the
token is ``out[2]``, and the waiter's ``torchair.ops.wait([...])`` orders after the whole body, one call instead of
``record()`` and ``wait`` (omni-infer's dispatch returns its expert counts last). The callee is read where the run
holds its module (``index.returns.tree_of``: a file of the run, or its package's file on disk), so the rule is
the same whether the files are transformed together or alone. It holds only where the call certainly runs that
function: a plain name the recording body does not bind, bound once in its module, naming a module-level function
of no decorator (a stream function would switch streams) bound once in its own module; and only where the element
is certainly a tensor of its own: made by arithmetic or by an ATen op whose schema returns one tensor that is no
view of its operands (a view, ``ids = topk_ids.reshape(-1)``, is made by what made the operand: maybe the caller,
before the body's work). Anything else keeps ``record()``.
"""

from __future__ import annotations

import ast

from codegen.index.returned import bound_once, returned_value
from codegen.index.returns import run_returns
from codegen.lower.flow.ge_returned import made_element, made_last
from codegen.lower.flow.import_chains import absolute_imports, run_package
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.flow.schema import aliases_self, one_tensor

__all__ = ["called_element", "made_by_callee"]

_DEPTH = 8  # calls followed into the functions they call; deeper, nothing is taken as made

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def called_element(fn: _Function, module: str, tree: ast.Module, index: object) -> int | None:
    """The index, in the tuple that ``fn``'s last work (a call of a function of the run) returns, of the element
    that call makes last, certainly a tensor of its own; None where there is none."""
    value = returned_value(fn)
    found = made_last([value], fn.body[-2] if len(fn.body) > 1 else None) if value is not None else None
    call = found[1] if found is not None else None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or _binds(fn, call.func.id):
        return None
    callee = _callee(call.func.id, module, tree, index)
    if callee is None:
        return None
    home, home_tree, node = callee
    returns = local_returns(home_tree, node.name, None, run_returns(index, home, home_tree, None, None))
    element = made_element(node, method=False, returns=returns) if isinstance(returned_value(node), ast.Tuple) else None
    return element[0] if element is not None and _own_tensor(element[1]) else None


def made_by_callee(fn: _Function, made: ast.expr, module: str, tree: ast.Module, index: object, depth: int = 0) -> bool:
    """Whether ``made``, the call that makes the one value ``fn`` returns, makes it with its own last work where the
    run can read the function it calls: that function's last work makes the one value it returns (so
    ``def ident(t: torch.Tensor) -> torch.Tensor: return t`` makes nothing: ``t`` was made before the call, maybe
    by the caller, and ordering on it orders on nothing the body did). A call the run cannot read keeps the
    premise its annotation gives (``tensors.py``); a name ``fn`` binds itself is no module function."""
    if not isinstance(made, ast.Call) or not isinstance(made.func, ast.Name):
        return True
    if _binds(fn, made.func.id) or depth >= _DEPTH:
        return False
    callee = _callee(made.func.id, module, tree, index)
    if callee is None:
        return True
    home, home_tree, node = callee
    returns = local_returns(home_tree, node.name, None, run_returns(index, home, home_tree, None, None))
    found = made_element(node, method=False, returns=returns)
    if found is None or isinstance(returned_value(node), ast.Tuple):
        return False
    return made_by_callee(node, found[1], home, home_tree, index, depth + 1)


def _callee(name: str, module: str, tree: ast.Module, index: object) -> tuple[str, ast.Module, ast.FunctionDef] | None:
    """The module (run key), tree and definition of the module-level function ``name`` names in ``module``."""
    if name not in bound_once(tree):
        return None
    own = _defined(tree, name)
    if own is not None:
        return module, tree, own
    chain = absolute_imports(tree, run_package(index, module)).get(name)
    tree_of = getattr(getattr(index, "returns", None), "tree_of", None)
    if chain is None or len(chain) < 2 or tree_of is None:
        return None
    home = index.key_of(".".join(chain[:-1]))  # type: ignore[attr-defined]
    home_tree = tree_of(home)
    found = _defined(home_tree, chain[-1]) if home_tree is not None else None
    return None if found is None or home_tree is None else (home, home_tree, found)


def _defined(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The module-level plain function ``name``, defined once and bound by nothing else in its module."""
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if len(defs) != 1 or defs[0].decorator_list or name not in bound_once(tree):
        return None
    return defs[0]


def _own_tensor(node: ast.expr) -> bool:
    """Arithmetic, or an ATen op (a tensor method or ``torch`` function) whose schema returns one tensor that is
    no view of its operands: a tensor whose producer is that op."""
    if isinstance(node, ast.BinOp):
        return True
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    return bool(one_tensor(node.func.attr)) and not aliases_self(node.func.attr)


def _binds(fn: _Function, name: str) -> bool:
    """``fn`` (its nested scopes too) may bind ``name``: the call may not reach the module's function."""
    return any(name in _bound(node) for part in (fn.args, *fn.body) for node in ast.walk(part))


def _bound(node: ast.AST) -> tuple[str, ...]:
    """The names ``node`` binds: a stored name, a parameter, an import, a ``global``, a nested definition, an
    ``except ... as`` or a ``match`` capture."""
    if isinstance(node, ast.Name):
        return () if isinstance(node.ctx, ast.Load) else (node.id,)
    if isinstance(node, ast.arg):
        return (node.arg,)
    if isinstance(node, ast.alias):
        return (node.asname or node.name.partition(".")[0],)
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return tuple(node.names)
    named = getattr(node, "name", None)
    return (named,) if isinstance(named, str) else ()
