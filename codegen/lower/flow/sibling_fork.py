"""A private method's first side call needs no fork of its own where its one caller ran, just before, a sibling
that forked the same stream on every path, and nothing the call reads changed since.

vllm-ascend's DeepSeek-V4 indexer: the public ``forward`` calls ``_cv_compute_query_and_update_cache``, whose side
calls (the key and scale cache updates on the overlap stream) run under ``if kv is not None:``, then
``_select_topk``, whose first statement projects ``hidden_states`` on that stream. ``_select_topk`` cannot tell
whether its sibling forked, so its call forked on every path (``tests/flow/test_sibling_fork_kept.py``: where the
sibling did not fork, a caller that made ``hidden_states`` right before races). The hand version's shape: the
sibling forks on every path, its ``if`` inside the block (``every_path_fork.py``: one switch more where the test
fails), and the projection runs on the stream that fork ordered. Both methods read the pair off the module's
source the same way, so the two plans agree:

- the method holding the call (B) and the sibling (A) are private methods of one class, each called once in the
  module, through ``self``, by two statements of one method's body (M), A's first (``held_params.callers_of``: the
  run sees every call); no other class of the module defines either name (an override would run instead);
- the call is B's only planned call and its first statement, given B's parameters, and its callee writes nothing
  in place (no parameter, no state of its object); M hands those parameters its own parameters, never rebound;
- A's planned calls are all on the call's stream, priority and guard, inside one ``if`` of A's body with no
  ``else`` and a test that runs no op (``quiet_tests.identity_test``), each alone in a statement of that ``if``'s
  body or of such an ``if`` in it; no ``return`` comes before it (``sibling_ifs.py``);
- the caller's stream runs nothing between that could matter (``sibling_between.py``); the state it writes there
  is checked against what the call reads in B's lowering (:meth:`SiblingForks.needs_no_fork`).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Mapping

import attrs

from codegen.index.held_params import callers_of
from codegen.lower.flow.caller_module import CallerModule
from codegen.lower.flow.callsites import CallSite, find_calls
from codegen.lower.flow.paths_meet import any_meet
from codegen.lower.flow.sibling_between import Between
from codegen.lower.flow.sibling_ifs import every_path_if

__all__ = ["SiblingForks", "sibling_forks"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen
class SiblingForks:
    """Of one caller: its ``if`` statements whose side calls fork on every path (it is a sibling A), and its calls
    that need no fork of their own, each with the state the caller's stream may write since the sibling's fork."""

    hoisted: frozenset[ast.stmt] = frozenset()
    unforked: Mapping[ast.Call, frozenset[str]] = attrs.Factory(dict)

    def needs_no_fork(self, call: ast.Call, state_read: frozenset[str]) -> bool:
        written = self.unforked.get(call)
        return written is not None and not any_meet(state_read, written)


@attrs.frozen
class _Pair:
    sibling: _Function  # A, whose ``if`` forks on every path
    method: _Function  # B, whose first call needs no fork
    hoisted: ast.If
    call: ast.Call
    written: frozenset[str]


_PAIRS: weakref.WeakKeyDictionary[ast.Module, dict[tuple[int, str], tuple[_Pair, ...]]]
_PAIRS = weakref.WeakKeyDictionary()


def sibling_forks(module: CallerModule, qualname: str, fn: _Function, receiver: str | None) -> SiblingForks:
    """What the rule says of the caller ``fn`` (``qualname`` in ``module``)."""
    owner = qualname.rpartition(".")[0]
    if receiver is None or not owner:
        return SiblingForks()
    known = _PAIRS.setdefault(module.tree, {})
    pairs = known.get((id(module.index), owner))
    if pairs is None:
        pairs = known[(id(module.index), owner)] = _pairs(module, owner)
    hoisted = frozenset(p.hoisted for p in pairs if p.sibling is fn)
    return SiblingForks(hoisted=hoisted, unforked={p.call: p.written for p in pairs if p.method is fn})


def _pairs(module: CallerModule, owner: str) -> tuple[_Pair, ...]:
    classes = [n for n in module.tree.body if isinstance(n, ast.ClassDef)]
    cls = next((c for c in classes if c.name == owner), None)
    if cls is None:
        return ()
    methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    elsewhere = {f.name for c in classes if c is not cls for f in c.body if isinstance(f, ast.FunctionDef)}
    found = [
        s
        for s in find_calls(module.ir.module_name, module.tree, module.index)  # type: ignore[arg-type]
        if s.stmt is not None
    ]
    sites: dict[str, list[CallSite]] = {}
    for site in found:
        sites.setdefault(site.caller, []).append(site)
    between = Between(module=module, owner=owner, methods=frozenset(methods), planned={id(s.call) for s in found})
    pairs = (_pair(module, owner, methods, sites, b, between) for n, b in methods.items() if n not in elsewhere)
    return tuple(p for p in pairs if p is not None)


def _only_call(module: CallerModule, owner: str, fn: _Function) -> tuple[_Function, ast.stmt, ast.Call] | None:
    """The one call of the private method ``fn`` in its module, where the run sees every call."""
    found = callers_of(module.index, (module.ir.module_name, module.tree), f"{owner}.{fn.name}", fn)
    return found.calls[0] if found is not None and len(found.calls) == 1 else None


def _pair(
    module: CallerModule,
    owner: str,
    methods: dict[str, _Function],
    sites: dict[str, list[CallSite]],
    b: _Function,
    between: Between,
) -> _Pair | None:
    """``b`` as the method B of a pair, with its sibling A, where the rule holds."""
    only = _only_call(module, owner, b)
    own = sites.get(f"{owner}.{b.name}", [])
    if only is None or len(own) != 1 or own[0].stmt is not _first_statement(b):
        return None
    callee = module.index.callees[own[0].key]  # type: ignore[attr-defined]
    if not callee.auto or callee.writes or callee.writes_state or only[1] not in only[0].body:
        return None
    return _with_sibling(module, (owner, methods, sites), b, (own[0], *only), between)


def _with_sibling(
    module: CallerModule,
    scope: tuple[str, dict[str, _Function], dict[str, list[CallSite]]],
    b: _Function,
    call: tuple[CallSite, _Function, ast.stmt, ast.Call],
    between: Between,
) -> _Pair | None:
    """The pair of ``b`` with the nearest sibling M calls before it (``call``: B's side call, M, M's statement
    calling B and that call), where A forks on every path and nothing between matters."""
    (owner, methods, sites), (side, m, stmt_b, call_b) = scope, call
    at = m.body.index(stmt_b)
    a, stmt_a = next(
        ((f, st) for st in reversed(m.body[:at]) if (f := _called_sibling(module, owner, methods, m, st))), (None, None)
    )
    calls = sites.get(f"{owner}.{a.name}", []) if a is not None else []
    if a is None or stmt_a is None or not _eventless(module, [side, *calls]):
        return None
    found = every_path_if(a, calls, module.index.callees, module.index.callees[side.key])  # type: ignore[attr-defined]
    lines = m.body[m.body.index(stmt_a) + 1 : at]
    written = between.written(a, found, m, lines, (b, side.call, stmt_b, call_b)) if found else None
    return None if found is None or written is None else _Pair(a, b, found[0], side.call, written)


def _eventless(module: CallerModule, sites: list[CallSite]) -> bool:
    """Each call's callee a stream function of this module with no ``@after`` or ``@records``: no user event serves
    as a fork (``event_fork.py``), so the first call in the sibling's ``if`` records and waits for its own."""
    own = {f"{module.ir.module_name}:{f.qualname}": f for f in module.ir.functions}
    return all(s.key in own and not own[s.key].waits and not own[s.key].records for s in sites)


def _first_statement(fn: _Function) -> ast.stmt:
    first = fn.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and len(fn.body) > 1
    return fn.body[1] if docstring else first


def _called_sibling(
    module: CallerModule, owner: str, methods: dict[str, _Function], m: _Function, stmt: ast.stmt
) -> _Function | None:
    """The private method a statement of M calls whole through ``self`` (``x = self._a(...)``), called only there."""
    value = stmt.value if isinstance(stmt, (ast.Assign, ast.Expr)) else None
    receiver = m.args.args[0].arg if m.args.args else None
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    func = value.func
    if not (isinstance(func.value, ast.Name) and func.value.id == receiver and func.attr in methods):
        return None
    only = _only_call(module, owner, methods[func.attr])
    overridden = any(
        isinstance(c, ast.ClassDef) and c.name != owner and any(getattr(f, "name", None) == func.attr for f in c.body)
        for c in module.tree.body
    )
    return methods[func.attr] if only is not None and only[2] is value and not overridden else None
