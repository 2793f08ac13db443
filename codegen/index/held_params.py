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
A caller that reads it only under a test of its object's fixed state leaves the keep where the test fails
(``codegen/lower/flow/held_where.py``, which reads the callers through :func:`callers_of` and :func:`path_after`).
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import Tensorness, signature_of
from codegen.index.path_after import path_after, read_after
from codegen.index.used_calls import Scope
from codegen.index.used_params import element
from codegen.index.walked import per_node, walked, walked_of

__all__ = ["Callers", "callers_of", "held_by_callers", "path_after", "read_after"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class Callers:
    """Every call of a function the run sees all of: its scope, the keys a caller may hold (each with its parameter
    and element), and each call with its calling function and statement."""

    scope: Scope
    params: tuple[str, ...]
    candidates: dict[str, tuple[str, int | None]]
    calls: tuple[tuple[_Function, ast.stmt, ast.Call], ...]

    def passed(self, call: ast.Call, key: str) -> str | None:
        """The caller's key for ``key``: the name passed to its parameter, or that element of the tuple it names."""
        return _passed(call, list(self.params), self.candidates[key])


def held_by_callers(index: object, module: tuple[str, ast.Module], qualname: str, fn: _Function) -> frozenset[str]:
    """The parameters of ``fn`` (``qualname`` in ``module``: its run key and tree) that every caller reads again
    after the call (none where some caller may be unseen)."""
    found = callers_of(index, module, qualname, fn)
    if found is None:
        return frozenset()
    held = dict(found.candidates)
    for caller, stmt, call in found.calls:
        held = {k: v for k, v in held.items() if read_after(found.scope, caller, stmt, found.passed(call, k))}
    return frozenset(held)


def callers_of(index: object, module: tuple[str, ast.Module], qualname: str, fn: _Function) -> Callers | None:
    """The calls of ``fn``, where the run sees them all (a private, undecorated function that is no stream
    function, every mention of its name a direct call)."""
    owner = qualname.rpartition(".")[0] or None
    scope = Scope(index=index, module=module[0], tree=module[1], owner=owner)
    private = fn.name.startswith("_") and not fn.name.startswith("__")
    key = f"{scope.module}:{scope.owner}.{fn.name}" if scope.owner else f"{scope.module}:{fn.name}"
    if not private or fn.decorator_list or key in scope.index.callees:  # type: ignore[attr-defined]
        return None
    calls = _calls(scope, fn)
    if not calls:
        return None
    params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1 if scope.owner else 0 :]
    candidates = _candidates(fn, params, method=scope.owner is not None)
    return Callers(scope=scope, params=tuple(params), candidates=candidates, calls=tuple(calls))


def _candidates(fn: _Function, params: list[str], *, method: bool) -> dict[str, tuple[str, int | None]]:
    """The keys a caller may hold, each with its parameter and element: a parameter annotated as a tensor, and
    each element that ``fn`` unpacks by name from a parameter annotated as a tuple of tensors (``_, k_cache, _ =
    kv_cache``: ``"kv_cache[1]"``)."""
    found: dict[str, tuple[str, int | None]] = {}
    for p in signature_of(fn, method=method).params:
        if p.name in params and p.tensor is Tensorness.TENSOR:
            found[p.name] = (p.name, None)
    tuples = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args) if _tensor_tuple(a.annotation)} & set(params)
    for stmt in walked_of(fn, ast.Assign):
        target, value = stmt.targets[0], stmt.value
        if len(stmt.targets) == 1 and isinstance(target, ast.Tuple) and isinstance(value, ast.Name):
            if value.id in tuples and not any(isinstance(e, ast.Starred) for e in target.elts):
                found |= {element(value.id, k): (value.id, k) for k in range(len(target.elts))}
    return found


def _tensor_tuple(annotation: ast.expr | None) -> bool:
    """``tuple[torch.Tensor, ...]`` or ``tuple[Tensor, Tensor]``: every element a tensor."""
    if not (isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value) in ("tuple", "Tuple")):
        return False
    parts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    return all(ast.unparse(p) in ("torch.Tensor", "Tensor", "...") for p in parts)


def _passed(call: ast.Call, params: list[str], held: tuple[str, int | None]) -> str | None:
    """The caller's key for ``held``: the name passed to its parameter, or that element of the tuple it names."""
    name = _argument(call, params, held[0])
    return name if name is None or held[1] is None else element(name, held[1])


def _calls(scope: Scope, fn: _Function) -> list[tuple[_Function, ast.stmt, ast.Call]] | None:
    """Each call of ``fn`` in its module, with its calling function and statement (``self.name(...)`` in a method,
    ``name(...)`` elsewhere); None where ``fn``'s name is mentioned otherwise."""
    spelled = _spellings(scope.tree)
    found = [
        (caller, stmt, call)
        for caller, stmt, call in spelled.calls.get(fn.name, ())
        if (scope.owner is None) is isinstance(call.func, ast.Name) and _direct(scope, caller, call)
    ]
    return found if spelled.mentions.get(fn.name, 0) == len(found) else None


def _direct(scope: Scope, caller: _Function, call: ast.Call) -> bool:
    """A method's call goes through the caller's own ``self``."""
    if scope.owner is None:
        return True
    receiver = caller.args.args[0].arg if caller.args.args else None
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == receiver


@attrs.frozen
class _Spelled:
    calls: dict[str, list[tuple[_Function, ast.stmt, ast.Call]]]  # name -> the calls spelling it in a statement
    mentions: dict[str, int]  # name -> how many names, attributes and strings spell it


@per_node
def _spellings(tree: ast.Module) -> _Spelled:
    """Every call by a name or an attribute in the simple statements of the module's functions, and every mention
    of a name (made once per tree: each caller of the module asks)."""
    calls: dict[str, list[tuple[_Function, ast.stmt, ast.Call]]] = {}
    for caller in (n for n in walked(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for stmt in (s for s in walked_of(caller, ast.stmt) if not hasattr(s, "body")):
            for call in walked_of(stmt, ast.Call):
                name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
                if name:
                    calls.setdefault(name, []).append((caller, stmt, call))
    mentions: dict[str, int] = {}
    for node in walked_of(tree, (ast.Name, ast.Attribute, ast.Constant)):
        name = getattr(node, "id", None) or getattr(node, "attr", None) or getattr(node, "value", None)
        if isinstance(name, str):
            mentions[name] = mentions.get(name, 0) + 1
    return _Spelled(calls=calls, mentions=mentions)


def _argument(call: ast.Call, params: list[str], param: str) -> str | None:
    """The name ``call`` passes whole to ``param`` (None: a computed value, or not passed plainly)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    given = next((k.value for k in call.keywords if k.arg == param), None)
    position = params.index(param)
    given = given if given is not None else (call.args[position] if position < len(call.args) else None)
    return given.id if isinstance(given, ast.Name) else None
