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

import attrs

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
        return set(_read(fn, scope, reads, seen, None).found)
    return set(_readings(index).reading(fn, scope, reads, seen).found)


@attrs.frozen
class _Reading:
    """What a reading found, the functions it read (``met``), how many deep (``span``: 1, ``fn`` alone) and whether
    a function met again or the depth cut it somewhere (``cut``): an uncut reading is the same under any ``seen``
    that holds none of ``met`` and leaves ``span`` levels under the depth."""

    found: frozenset[str]
    met: frozenset[_Function] = frozenset()
    span: int = 1
    cut: bool = True


class _Readings:
    """The readings of one run: by ``seen``, and each function's uncut one; ``open`` gathers, for each reading under
    way, what the readings inside it met."""

    def __init__(self) -> None:
        self.kept: dict[tuple[object, ...], _Reading] = {}
        self.uncut: dict[tuple[object, ...], _Reading] = {}
        self.open: list[list[_Reading]] = []

    def reading(self, fn: _Function, scope: Scope, reads: tuple[Held, Pairs], seen: frozenset[_Function]) -> _Reading:
        which = (fn, scope.owner, scope.receiver, reads)
        found = self.kept.get((*which, seen)) or self._uncut(which, seen)
        if found is None:
            found = self.kept[(*which, seen)] = _read(fn, scope, reads, seen, self)
            if not found.cut:
                self.uncut.setdefault(which, found)
        if self.open:
            self.open[-1].append(found)
        return found

    def _uncut(self, which: tuple[object, ...], seen: frozenset[_Function]) -> _Reading | None:
        found = self.uncut.get(which)
        if found is None or len(seen) + found.span > _DEPTH or not found.met.isdisjoint(seen):
            return None
        return found


@per_run
def _readings(index: object) -> _Readings:
    """The returned parameters read in the run ``index`` (the last run asked about only)."""
    return _Readings()


def _read(
    fn: _Function, scope: Scope, reads: tuple[Held, Pairs], seen: frozenset[_Function], run: _Readings | None
) -> _Reading:
    names = frozenset(signature_of(fn, method=scope.owner is not None).names)
    if fn in seen or len(seen) >= _DEPTH:
        return _Reading(names)
    held, pairs = reads
    inner = seen | {fn}
    inside: list[_Reading] = []
    if run is not None:
        run.open.append(inside)
    try:
        groups = binding_groups(fn, pairs(fn, scope, inner))
        values = [r.value for r in walked_of(fn, ast.Return) if r.value is not None]
        found = frozenset().union(*(held(value, scope, inner) | alias_sources(value) for value in values))
    finally:
        if run is not None:
            run.open.pop()
    met = frozenset({fn}).union(*(r.met for r in inside))
    span = 1 + max((r.span for r in inside), default=0)
    return _Reading(widened(found, groups) & names, met, span, any(r.cut for r in inside))


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
