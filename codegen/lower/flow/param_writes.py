"""Which parameters a function writes in place: through any name that may hold their memory, and through the
functions of its module it passes them to.

A caller that runs the function on another stream reads its arguments on its own stream meanwhile only where the
function does not write them; so a write counts however it is spelled: in place on the parameter, on a view
of it (``a, b = x.chunk(2); a.mul_(2)``, ``v = x.view(-1); v.add_(1)``, ``x.transpose(0, 1).copy_(y)``:
``view_roots.py``), or by a function of the same module (or a method of the same object) the parameter, or a
view of it, is passed to and whose own body writes that parameter (``helper(x[0])``), one call after another.
Given the functions of a module of the run (``imported_writes.ModuleFunctions``), the calls it makes into other
modules of the run are read there the same way, module after module (a cycle is read once; past a depth a
call may write every argument); a call the run cannot read may write what ``imported_writes.py`` says. Given a
plain mapping, a function the module does not hold is not read.

What a function of a module of the run writes is read once per run and kept on its module's ``ModuleFunctions``
(``known_writes.py``), for every caller that reaches it with none of the functions it reached already being
followed and depth to spare: the answer is then the one reading it again would give.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping

from codegen.frontend.signature import ParamKind, signature_of
from codegen.index.walked import walked_of
from codegen.lower.flow.foreign_writes import every_argument
from codegen.lower.flow.imported_writes import ModuleFunctions, Reached
from codegen.lower.flow.known_writes import Trace, known_writes
from codegen.lower.flow.view_roots import alias_sources, view_roots
from codegen.lower.flow.writes import inplace_writes

__all__ = ["call_writes", "param_writes", "resolved_function", "written_arguments"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Functions = Mapping[str, _Function]
_Callee = tuple[_Function, _Functions, str | None] | frozenset[str]
_DEPTH = 16  # calls followed one inside another at most; a call deeper may write every argument


def param_writes(
    fn: _Function, params: Iterable[str], functions: _Functions | None = None, owner: str | None = None
) -> tuple[str, ...]:
    """The parameters of ``fn`` whose memory its body may write in place (see above); ``functions``: the module's
    functions by qualname (``Class.method``), ``owner``: the class ``fn`` is defined in."""
    return _writes(fn, tuple(params), functions or {}, owner, frozenset(), Trace())


def _writes(
    fn: _Function, params: tuple[str, ...], functions: _Functions, owner: str | None, seen: frozenset, trace: Trace
) -> tuple:
    names = {name for stmt in fn.body for name in inplace_writes(stmt, nested=True)}
    names |= _passed_written(fn, functions, owner, seen | {fn}, trace)
    if not names:
        return ()  # nothing written: which names hold a parameter's memory does not matter
    roots = view_roots(fn, params)
    written = frozenset().union(*(roots.get(name, frozenset()) for name in names))
    return tuple(p for p in params if p in written)


def _passed_written(fn: _Function, functions: _Functions, owner: str | None, seen: frozenset, trace: Trace) -> set:
    """The names whose memory a call of a function of the module writes, as an argument it writes."""
    receiver = signature_of(fn, method=owner is not None).receiver
    return set().union(*(_call_writes(c, functions, owner, receiver, seen, trace) for c in walked_of(fn, ast.Call)))


def call_writes(call: ast.Call, functions: _Functions, owner: str | None, receiver: str | None) -> set[str]:
    """The caller's names whose memory ``call`` writes in place through a function of the module (or a method of
    the caller's object, ``owner`` its class) that writes the parameter they go to (see above)."""
    return _call_writes(call, functions, owner, receiver, frozenset(), Trace())


def _call_writes(
    call: ast.Call, functions: _Functions, owner: str | None, receiver: str | None, seen: frozenset, trace: Trace
) -> set[str]:
    callee = _resolved(call, functions, owner, receiver)
    if isinstance(callee, frozenset):
        return set(callee)  # a call the run cannot read
    if callee is None or trace.followed(callee[0], seen):
        return set()
    if trace.too_deep(seen, _DEPTH):
        return set(every_argument(call))
    return _callee_writes(call, callee[0], callee[1], callee[2], seen, trace)


def _callee_writes(
    call: ast.Call, fn: _Function, functions: _Functions, owner: str | None, seen: frozenset, trace: Trace
) -> set:
    return set().union(*(alias_sources(a) for a in _callee_arguments(call, fn, functions, owner, seen, trace)))


def _callee_arguments(
    call: ast.Call, fn: _Function, functions: _Functions, owner: str | None, seen: frozenset, trace: Trace
) -> list[ast.expr]:
    signature = signature_of(fn, method=owner is not None)

    def read(inner: Trace) -> tuple[str, ...]:
        return _writes(fn, signature.names, functions, owner, seen | {fn}, inner)

    written = known_writes(functions, fn, owner, seen, _DEPTH, trace, read)
    return _arguments_to(call, signature.params, set(written))


def written_arguments(call: ast.Call, functions: _Functions, owner: str | None, receiver: str | None) -> list[ast.expr]:
    """The arguments of ``call`` whose memory the function it runs writes in place (as :func:`call_writes` reads
    it); where the run cannot read that function, each argument holding a name it may write."""
    callee = _resolved(call, functions, owner, receiver)
    if isinstance(callee, frozenset):
        return [a for a in [*call.args, *(k.value for k in call.keywords)] if alias_sources(a) & callee]
    if callee is None:
        return []
    return _callee_arguments(call, callee[0], callee[1], callee[2], frozenset(), Trace())


def resolved_function(
    call: ast.Call, functions: _Functions, owner: str | None, receiver: str | None
) -> tuple[_Function, _Functions, str | None] | None:
    """The function ``call`` runs where the run reads it, with its module's functions and its class (see below)."""
    callee = _resolved(call, functions, owner, receiver)
    return None if isinstance(callee, frozenset) else callee


def _resolved(call: ast.Call, functions: _Functions, owner: str | None, receiver: str | None) -> _Callee | None:
    """The module's function a call runs (``helper(x)``), or its object's method (``self.helper(x)``), with the
    functions of its module and the class it is defined in; given a module of the run (``imported_writes.py``),
    another module's function, or the names a call the run cannot read may write."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in functions:
        return functions[func.id], functions, None
    if (
        owner is not None
        and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == receiver
        and f"{owner}.{func.attr}" in functions
    ):
        return functions[f"{owner}.{func.attr}"], functions, owner
    if not isinstance(functions, ModuleFunctions):
        return None
    reached = functions.reached(call, owner, receiver)
    return (reached.fn, reached.functions, reached.owner) if isinstance(reached, Reached) else reached


def _arguments_to(call: ast.Call, params: tuple, written: set[str]) -> list[ast.expr]:
    """The call's arguments that go to a parameter in ``written``: every argument where a star spreads some
    (which parameter each takes is not read)."""
    if not written:
        return []
    spread = any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)
    if spread or any(p.kind in (ParamKind.VAR_POSITIONAL, ParamKind.VAR_KEYWORD) and p.name in written for p in params):
        return [*call.args, *(k.value for k in call.keywords)]
    positional = [p.name for p in params if p.kind in (ParamKind.POSITIONAL_ONLY, ParamKind.POSITIONAL)]
    found = [a for name, a in zip(positional, call.args) if name in written]
    return found + [k.value for k in call.keywords if k.arg in written]
