"""What the caller's stream runs between a sibling's fork and a private method's first side call (``sibling_fork.py``).

Without a fork of its own, the call's stream is ordered after the caller's work only up to the sibling's fork:
the statements of the sibling after its ``if`` (A), those of the method calling both between the two calls (M),
and M's evaluation of the call's arguments run on the caller's stream with nothing ordering the call after them.
The call may go without its fork only where none of them matters to it:

- each is a plain statement (no block, no jump out but A's last ``return``), calls no planned call (another
  stream's work), stores no attribute (a guard may be one), calls no method of the class through ``self`` nor
  hands ``self`` on (it may change anything of the object);
- none writes in place memory of a parameter of its function, by its spelling or through a helper of the module
  (``writes.inplace_writes``, ``param_writes.call_writes``; views followed: ``view_roots``): the call reads M's
  parameters, which A may have been handed too;
- A's statements read nothing its side calls bound: a result of the side stream read there by the caller's stream
  and freed after that read could go, in the stream's pool, to an allocation of the call, which waits for nothing
  the caller did since the fork (the reason ``reuse.py`` gives);
- the names the call reads are B's parameters, which M hands its own parameters, never rebound in M; M's statement
  evaluates nothing but names, constants and lambdas before the call (the call is its value, or the left of an
  operation);
- what they write of objects' state (``StateWrites``) is returned, for B's lowering to check against what the call
  reads of it (:meth:`sibling_fork.SiblingForks.needs_no_fork`).
"""

from __future__ import annotations

import ast

import attrs

from codegen.index.paths import dotted_name
from codegen.index.walked import walked_of
from codegen.lower.flow.call_state_writes import Scope
from codegen.lower.flow.caller_module import CallerModule
from codegen.lower.flow.exprs import bound_names, loaded_names
from codegen.lower.flow.imported_writes import module_functions
from codegen.lower.flow.object_calls import stores_attribute
from codegen.lower.flow.param_writes import call_writes
from codegen.lower.flow.state_writes import StateWrites
from codegen.lower.flow.view_roots import view_roots
from codegen.lower.flow.writes import inplace_writes

__all__ = ["Between"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Call = tuple[_Function, ast.Call, ast.stmt, ast.Call]  # B, its side call, M's statement calling B, that call


@attrs.frozen
class Between:
    """The class's module, its name, its methods, and the planned calls of the module (by id)."""

    module: CallerModule
    owner: str
    methods: frozenset[str]
    planned: set[int]

    def written(
        self, a: _Function, side: tuple[ast.If, list[ast.stmt]], m: _Function, lines: list[ast.stmt], call: _Call
    ) -> frozenset[str] | None:
        """The state written between A's ``if`` (the first of A's statements holding its side calls, ``side``) and
        B's side call, M's ``lines`` between the two calls; None where something there rules the call's going
        without a fork out."""
        x, held = side
        after = [st for st in a.body[a.body.index(x) + 1 :] if st not in held]
        bound = frozenset().union(*(bound_names(st) for h in held for st in walked_of(h, ast.stmt)))
        if any(loaded_names(st) & bound for st in after) or not _handed(m, call):
            return None
        if not (self._quiet(a, after) and self._quiet(m, lines)):
            return None
        return self._state(a, after) | self._state(m, lines)

    def _quiet(self, fn: _Function, lines: list[ast.stmt]) -> bool:
        """Each of ``lines`` (statements of ``fn``) a plain statement that runs no other stream's work, changes no
        attribute, calls no method of the object and writes no memory of ``fn``'s parameters."""
        receiver, params = _receiver(fn), set(_params(fn))
        roots = view_roots(fn, sorted(params))
        for st in lines:
            if hasattr(st, "body") or isinstance(st, ast.Raise) or stores_attribute(st):
                return False
            if self._calls_object(st, receiver) or any(id(c) in self.planned for c in walked_of(st, ast.Call)):
                return False
            if any(roots.get(n, frozenset()) & params for n in self._writes(st, receiver)):
                return False
        return not any(isinstance(st, ast.Return) for st in lines[:-1])

    def _writes(self, st: ast.stmt, receiver: str | None) -> set[str]:
        """The names whose memory ``st`` writes in place, by its spelling or through a helper of the module."""
        functions = module_functions(self.module.index, self.module.ir.module_name, self.module.tree)
        helped = (call_writes(c, functions, self.owner, receiver) for c in walked_of(st, ast.Call))
        return set(inplace_writes(st)).union(*helped)

    def _calls_object(self, st: ast.stmt, receiver: str | None) -> bool:
        """A method of the class called through ``self``, or ``self`` handed to a call."""
        for call in walked_of(st, ast.Call):
            parts = (dotted_name(call.func) or "").split(".")
            if len(parts) == 2 and parts[0] == receiver and parts[1] in self.methods:
                return True
            if any(isinstance(v, ast.Name) and v.id == receiver for v in _arguments(call)):
                return True
        return False

    def _state(self, fn: _Function, lines: list[ast.stmt]) -> frozenset[str]:
        functions = module_functions(self.module.index, self.module.ir.module_name, self.module.tree)
        writes = StateWrites(Scope(functions, self.owner, _receiver(fn)), fn)
        return frozenset().union(*(writes(st) for st in lines))


def _receiver(fn: _Function) -> str | None:
    return fn.args.args[0].arg if fn.args.args else None


def _params(fn: _Function) -> list[str]:
    args = fn.args
    named = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)][1:]
    return named + [a.arg for a in (args.vararg, args.kwarg) if a is not None]


def _handed(m: _Function, call: _Call) -> bool:
    """The side call reads B's parameters only, which M's call hands M's own parameters, never rebound in M; M's
    statement runs nothing before the call."""
    b, side, stmt, call_b = call
    if (
        not _first_in(stmt, call_b)
        or not all(map(_plain, _arguments(call_b)))
        or any(k.arg is None for k in call_b.keywords)
    ):
        return False
    given = dict(zip(_params(b), call_b.args)) | {k.arg: k.value for k in call_b.keywords if k.arg}
    rebound = frozenset().union(*(bound_names(st) for st in walked_of(m, ast.stmt)))
    for value in _arguments(side):
        passed = given.get(value.id) if isinstance(value, ast.Name) else None
        if not isinstance(passed, ast.Name) or passed.id not in _params(m) or passed.id in rebound:
            return False
    return True


def _arguments(call: ast.Call) -> tuple[ast.expr, ...]:
    return (*call.args, *(k.value for k in call.keywords))


def _first_in(stmt: ast.stmt, call: ast.Call) -> bool:
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr, ast.Return)) else None
    return value is call or (isinstance(value, ast.BinOp) and value.left is call)


def _plain(value: ast.expr) -> bool:
    """An argument whose evaluation runs no op: a name, a constant, a lambda (made, not called)."""
    return isinstance(value, (ast.Name, ast.Constant, ast.Lambda))
