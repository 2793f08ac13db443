"""Which arguments of a call the result of a function of the run may be, read in its body.

``def pick(t): return t[: t.shape[0]]`` returns a view of its parameter: ``y = pick(x)`` binds ``y`` to ``x``'s
memory, as a torch view would, so a side call writing ``x`` is joined before the caller reads ``y``. A function's
result may be a parameter where a ``return`` gives what may hold its memory: the parameter, a view of it, or a
name its body groups with it (``result_aliases.py``, read in the function as in a caller: ``v = t.view(n, -1)``,
``u = other(t)``). Read through module functions, methods of the object and submodules' ``forward``, in any module
of the run (``param_writes.resolved_function``), and on through the functions those return from; a function met
again while it is read (recursion), or past a depth, may return any parameter. A call spreading ``*args`` or
``**kwargs``, or a returned ``*args``/``**kwargs`` parameter, may return any argument.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from codegen.frontend.signature import ParamKind, Signature, signature_of
from codegen.index.per_index import per_run
from codegen.index.walked import walked_of
from codegen.lower.flow.binding_aliases import Binding, binding_groups, widened
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["Held", "returned_arguments", "returned_params"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
Held = Callable[[ast.expr, Scope, frozenset[_Function]], frozenset[str]]  # what a returned value may hold
Pairs = Callable[[_Function, Scope, frozenset[_Function]], list[Binding]]
_DEPTH = 8  # functions followed one inside another at most; deeper, a result may be any parameter


def returned_arguments(
    call: ast.Call, callee: tuple[_Function, Mapping[str, _Function], str | None], reads: tuple[Held, Pairs], seen
) -> list[ast.expr]:
    """The arguments of ``call`` whose memory its result may be, ``callee`` the function of the run it runs (with
    its module's functions and class); ``reads``: how a value and a body are read (``result_aliases.py``)."""
    fn, functions, owner = callee
    signature = signature_of(fn, method=owner is not None)
    returned = returned_params(fn, Scope(functions, owner, signature.receiver), reads, seen)
    return _given(call, signature, returned)


def returned_params(fn: _Function, scope: Scope, reads: tuple[Held, Pairs], seen: frozenset[_Function]) -> set[str]:
    """The parameters of ``fn`` whose memory its result may be (every one where it is met again or too deep), read
    once per run for the functions being read around it (``seen``: a caller's own reading has none)."""
    index = getattr(scope.functions, "index", None)
    if index is None:
        return set(_read(fn, scope, reads, seen))
    kept, key = _readings(index), (fn, scope.owner, scope.receiver, reads, seen)
    if key not in kept:
        kept[key] = _read(fn, scope, reads, seen)
    return set(kept[key])


@per_run
def _readings(index: object) -> dict[tuple[object, ...], frozenset[str]]:
    """The returned parameters read in the run ``index`` (the last run asked about only)."""
    return {}


def _read(fn: _Function, scope: Scope, reads: tuple[Held, Pairs], seen: frozenset[_Function]) -> frozenset[str]:
    names = frozenset(signature_of(fn, method=scope.owner is not None).names)
    if fn in seen or len(seen) >= _DEPTH:
        return names
    held, pairs = reads
    inner = seen | {fn}
    groups = binding_groups(fn, pairs(fn, scope, inner))
    values = [r.value for r in walked_of(fn, ast.Return) if r.value is not None]
    found = frozenset().union(*(held(value, scope, inner) | alias_sources(value) for value in values))
    return widened(found, groups) & names


def _given(call: ast.Call, signature: Signature, returned: set[str]) -> list[ast.expr]:
    """The call's arguments that go to a parameter in ``returned``; every argument where a star spreads some."""
    if not returned:
        return []
    every = [*call.args, *(k.value for k in call.keywords)]
    spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    starred = (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD)
    if spread or any(p.kind in starred and p.name in returned for p in signature.params):
        return every
    positional = [p.name for p in signature.params if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
    found = [a for name, a in zip(positional, call.args) if name in returned]
    return found + [k.value for k in call.keywords if k.arg in returned]
