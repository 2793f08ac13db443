"""Which inputs of a planned call its own results hold: the call returns them as they came.

``nope_cache, pe_cache = self.kv_rmsnorm_rope_cache(kv, cos, sin, kv_cache, slots)``, whose body ends in
``return write_slots(kv_cache[0], slots, k_nope), write_slots(kv_cache[1], slots, k_pe)`` and ``write_slots``
returns its ``cache`` as it came (``codegen/index/returned.py``): ``nope_cache`` *is* ``kv_cache[0]``. Where the
caller reads both results after the join, it holds every tensor of ``kv_cache`` the side stream touches until
then, and needs no ``record_stream`` for it (``keep_alive.py``). Only what is certain counts: a callee of the
caller's module whose decorators are all npudsl's (a decorated class: those on the class, none on its
``forward``; sglang's fused MLA preprocess returns ``positions`` as it came) and clone nothing (no
``@keep_output(clone=...)``), whose only ``return`` is its last statement; each returned value is a parameter, a
constant index of one, or a call of a function returning such a value as it came; a parameter is held when every
use of it in the body is one of the indexes returned (or it is returned whole), and nothing in the body rebinds
it or the function's name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

import attrs

from codegen.frontend.ir import StreamFunction
from codegen.index import scan
from codegen.index.returned import bound_once, last_return
from codegen.index.returns import param_returned
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.exprs import binding_name
from codegen.lower.flow.site_sync import param_of
from codegen.lower.flow.sites import Site

__all__ = ["Returned", "returned_inputs"]

Returned = dict[ast.expr, dict[str, frozenset[str]]]  # call -> {the caller's input: the result names holding it}
_Alias = tuple[str, int | None]  # a parameter, and the constant index of it returned (None: all of it)
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def returned_inputs(
    tree: ast.Module, index: object, module: str, functions: Iterable[StreamFunction], sites: list[Site]
) -> Returned:
    """For each planned call of a function of ``module`` whose statement binds its results by name: the caller's
    inputs (passed whole) that the results hold, each with the result names that hold it."""
    nodes = scan.functions_by_qualname(tree)
    specs = {fn.qualname: fn for fn in functions}
    found: Returned = {}
    for site in sites:
        callee = site.callee
        qualname = callee.qualname  # type: ignore[attr-defined]
        fn, spec = nodes.get(qualname), specs.get(qualname)
        if callee.module != module or fn is None or spec is None:  # type: ignore[attr-defined]
            continue
        if spec.keep_output is not None or not _only_npudsl(tree, fn, spec):
            continue
        held = _held(site, _returned(fn, tree, index, module))
        if held:
            found[site.call.call] = held
    return found


def _only_npudsl(tree: ast.Module, fn: _Function, spec: StreamFunction) -> bool:
    """Every decorator of the callee is npudsl's: the function's, or for a decorated class (``spec.class_level``)
    the class's, its ``forward`` bearing none."""
    if not spec.class_level:
        return len(fn.decorator_list) == len(spec.decorations)
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == spec.owner), None)
    return cls is not None and not fn.decorator_list and len(cls.decorator_list) == len(spec.decorations)


def _held(site: Site, returned: _Returned | None) -> dict[str, frozenset[str]]:
    """{the caller's input name: the result names holding what the call reads of it}."""
    stmt = site.stmt
    if returned is None or not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return {}
    names = _result_names(stmt.targets[0], len(returned.values))
    if names is None:
        return {}
    holders: dict[str, set[str]] = {}
    for alias, held in zip(returned.values, names):
        if alias is not None:
            holders.setdefault(alias[0], set()).update(held)
    found: dict[str, frozenset[str]] = {}
    for argument in site.args:
        param = param_of(site, argument.slot)
        if argument.bare and argument.name and param in holders and param in returned.covered:
            found[argument.name] = frozenset(holders[param])
    return found


def _result_names(target: ast.expr, count: int) -> list[frozenset[str]] | None:
    """The names holding each returned value: one name holds the whole tuple, a tuple of names one each."""
    if isinstance(target, ast.Name):
        return [frozenset({target.id})] * count
    elts = target.elts if isinstance(target, ast.Tuple) else []
    if len(elts) != count or not all(isinstance(e, ast.Name) for e in elts):
        return None
    return [frozenset({e.id}) for e in elts if isinstance(e, ast.Name)]


@attrs.frozen(kw_only=True)
class _Returned:
    values: list[_Alias | None]  # what each returned value is (None: unknown)
    covered: frozenset[str]  # the parameters every use of which in the body is returned


def _returned(fn: _Function, tree: ast.Module, index: object, module: str) -> _Returned | None:
    """What ``fn`` returns, where its only ``return`` is its last statement and it is no generator."""
    last = last_return(fn)
    if last is None or last.value is None:
        return None
    rebound = _bound_anywhere(fn)
    named = frozenset(a.arg for a in walked_of(fn.args, ast.arg))
    params = named - rebound
    reader = _Reader(local=named | rebound, params=params, once=bound_once(tree), index=index, module=module)
    values = [reader.alias(v) for v in (last.value.elts if isinstance(last.value, ast.Tuple) else [last.value])]
    return _Returned(values=values, covered=frozenset(p for p in params if _every_use_returned(fn, p, values)))


def _bound_anywhere(fn: _Function) -> frozenset[str]:
    """Every name the body binds or declares anywhere (nested scopes and imports too: wider is safe)."""
    found: set[str] = set()
    for node in walked(fn):
        if node is fn:
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            found |= set(node.names)
        name = node.id if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) else binding_name(node)
        if name:
            found.add(name)
    return frozenset(found)


def _every_use_returned(fn: _Function, param: str, values: list[_Alias | None]) -> bool:
    """Each read of ``param`` in the body is a constant index of it that is returned (or it is returned whole)."""
    indexes = {a[1] for a in values if a is not None and a[0] == param}
    if None in indexes:
        return True
    subscripted = {
        id(node.value): _constant_index(node)
        for node in walked_of(fn, ast.Subscript)
        if isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load)
    }
    uses = [node for node in walked_of(fn, ast.Name) if node.id == param]
    return bool(uses) and all(id(node) in subscripted and subscripted[id(node)] in indexes for node in uses)


def _constant_index(node: ast.Subscript) -> int | None:
    index = node.slice
    if isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool):
        return index.value
    return None


@attrs.frozen(kw_only=True)
class _Reader:
    local: frozenset[str]  # the names the function binds (its parameters too)
    params: frozenset[str]  # its parameters nothing in its body rebinds
    once: frozenset[str]  # the names its module's scope binds once
    index: object
    module: str

    def alias(self, node: ast.expr) -> _Alias | None:
        """The parameter (and constant index of it) ``node`` is as it came; None if it may be anything else."""
        if isinstance(node, ast.Name) and node.id in self.params:
            return node.id, None
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in self.params:
            position = _constant_index(node)
            return (node.value.id, position) if position is not None else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            passed = self._passed_back(node, node.func.id)
            return self.alias(passed) if passed is not None else None
        return None

    def _passed_back(self, call: ast.Call, name: str) -> ast.expr | None:
        """The argument of ``call`` that the module-level function ``name`` returns as it came."""
        if name in self.local or name not in self.once:
            return None
        fact = param_returned(self.index, self.module, name)
        if fact is None:
            return None
        position, param = fact
        keyword = next((k.value for k in call.keywords if k.arg == param), None)
        if keyword is not None:
            return keyword
        if position < 0 or len(call.args) <= position:
            return None
        return None if any(isinstance(a, ast.Starred) for a in call.args[: position + 1]) else call.args[position]
