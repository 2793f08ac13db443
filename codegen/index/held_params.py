"""Which parameters of a function every caller surely reads again after the call, on the caller's stream.

A side stream reading a parameter needs no ``record_stream`` for it when the caller's stream reads that tensor again
after the side stream is joined: its memory lives (in a captured graph: up to its last use) until after the join, which
orders the side read first. A function joins what it forked before it returns, so a read by its caller after the call
comes after the join. This is a fact about callers, so it is made only where the run sees every one, in any grouping of
files: the function's name is private to its module (one leading underscore) and every mention of it there is a direct
call (``self._mla_prolog(...)`` in a method, ``_helper(...)`` in a function; no other use, no string spelling it, which
``getattr`` could take), and the function is no stream function of the run (its own stream would take the join) and
bears no decorator (a static method's arguments, a wrapper's). Each caller must pass the parameter a name (an annotated
tensor, so an op on it reads its memory) and, from the call's statement on (its block, then past the end of an ``if``
branch into what follows the ``if``; never past a loop's end or the function's), surely read it in an op before
rebinding it (``used_params.py``): vllm-ascend's DSV4 attention reads ``cos`` and ``-sin`` after
``self._mla_prolog(...)``, while cann_v4_compressor's ``sparse_attn`` reads them only in some layers, which is no read.
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import Tensorness, signature_of
from codegen.index.used_calls import Scope
from codegen.index.used_params import READ, block_reads
from codegen.index.walked import walked
from codegen.lower.flow.exprs import bound_names

__all__ = ["held_by_callers"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def held_by_callers(index: object, module: tuple[str, ast.Module], qualname: str, fn: _Function) -> frozenset[str]:
    """The parameters of ``fn`` (``qualname`` in ``module``: its run key and tree) that every caller reads again
    after the call (none where some caller may be unseen)."""
    owner = qualname.rpartition(".")[0] or None
    scope = Scope(index=index, module=module[0], tree=module[1], owner=owner)
    private = fn.name.startswith("_") and not fn.name.startswith("__")
    key = f"{scope.module}:{scope.owner}.{fn.name}" if scope.owner else f"{scope.module}:{fn.name}"
    if not private or fn.decorator_list or key in scope.index.callees:  # type: ignore[attr-defined]
        return frozenset()
    calls = _calls(scope, fn)
    if not calls:
        return frozenset()
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1 if scope.owner else 0 :]
    tensors = {p.name for p in signature_of(fn, method=scope.owner is not None).params if p.tensor is Tensorness.TENSOR}
    held = tensors & set(params)
    for caller, stmt, call in calls:
        held &= {p for p in held if _read_after(scope, caller, stmt, _argument(call, params, p))}
    return frozenset(held)


def _calls(scope: Scope, fn: _Function) -> list[tuple[_Function, ast.stmt, ast.Call]] | None:
    """Each call of ``fn`` in its module, with its calling function and statement; None where ``fn``'s name is
    mentioned otherwise."""
    found: list[tuple[_Function, ast.stmt, ast.Call]] = []
    for caller in (n for n in walked(scope.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for stmt in (s for s in walked(caller) if isinstance(s, ast.stmt) and not hasattr(s, "body")):
            found += [(caller, stmt, c) for c in _own_calls(scope, caller, stmt, fn.name)]
    mentions = [n for n in walked(scope.tree) if _spells(n, fn.name)]
    return found if len(mentions) == len(found) else None


def _own_calls(scope: Scope, caller: _Function, stmt: ast.stmt, name: str) -> list[ast.Call]:
    """The direct calls of ``name`` in ``stmt`` (``self.name(...)`` in a method, ``name(...)`` elsewhere)."""
    receiver = caller.args.args[0].arg if scope.owner and caller.args.args else None
    return [
        node
        for node in walked(stmt)
        if isinstance(node, ast.Call)
        and (
            (scope.owner is None and isinstance(node.func, ast.Name) and node.func.id == name)
            or (
                scope.owner is not None
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == name
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == receiver
            )
        )
    ]


def _spells(node: ast.AST, name: str) -> bool:
    return (
        (isinstance(node, ast.Name) and node.id == name)
        or (isinstance(node, ast.Attribute) and node.attr == name)
        or (isinstance(node, ast.Constant) and node.value == name)
    )


def _argument(call: ast.Call, params: list[str], param: str) -> str | None:
    """The name ``call`` passes whole to ``param`` (None: a computed value, or not passed plainly)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    given = next((k.value for k in call.keywords if k.arg == param), None)
    position = params.index(param)
    given = given if given is not None else (call.args[position] if position < len(call.args) else None)
    return given.id if isinstance(given, ast.Name) else None


def _read_after(scope: Scope, caller: _Function, stmt: ast.stmt, name: str | None) -> bool:
    """``caller`` surely reads ``name`` in an op after ``stmt`` (which must not rebind it)."""
    if name is None or name in bound_names(stmt) or isinstance(stmt, ast.Return):
        return False
    receiver = caller.args.args[0].arg if scope.owner and caller.args.args else None
    here = attrs.evolve(scope, owner=_owner(scope, caller), receiver=receiver)
    names = {name}
    block, at = _place(caller, stmt)
    while block is not None:
        found = block_reads(here, block[at + 1 :], names)
        if found != "through":
            return found == READ
        block, at = _outer_if(caller, block)
    return False


def _owner(scope: Scope, caller: _Function) -> str | None:
    classes = [c for c in scope.tree.body if isinstance(c, ast.ClassDef) and caller in c.body]
    return classes[0].name if classes else None


def _place(caller: _Function, stmt: ast.stmt) -> tuple[list[ast.stmt] | None, int]:
    for node in walked(caller):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and stmt in block:
                return block, block.index(stmt)
    return None, 0


def _outer_if(caller: _Function, block: list[ast.stmt]) -> tuple[list[ast.stmt] | None, int]:
    """The block holding the ``if`` whose branch ``block`` is, and the ``if``'s place in it (None: no ``if``)."""
    for node in walked(caller):
        if isinstance(node, ast.If) and (node.body is block or node.orelse is block):
            return _place(caller, node)
    return None, 0
