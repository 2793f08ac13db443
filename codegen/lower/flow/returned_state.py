"""Which tensors a stream call reads of an object its caller changes come back in its results as they were.

vllm_qwen3_dbo's dispatch is given the dispatcher the caller filled (``state_keeps.py`` keeps
``token_dispatchers[i].tokens_per_expert`` for the communication stream) and ends in ``return
token_dispatcher.permute2()``, whose ``return self.global_input_tokens, self.tokens_per_expert`` hands that same
tensor back: ``tokens_per_expert[i]`` *is* it. Where the caller holds that result until it returns, and so past
every join of the call (CONTRACT section 2: a call joins before its function returns), the tensor's memory outlives
the side stream's use and its ``record_stream`` can go: the attribute version of ``returned_inputs.py``.

Only what is certain counts. The callee is a function of a module the run holds whose only ``return`` is its last
statement; a returned value is ``p.attr`` or, returned whole, ``p.m()`` of a method of ``p``'s class (annotated,
plain: no base, no decorator) whose only, last ``return`` gives ``self.attr`` (alone or in a tuple display);
``p`` is a parameter nothing rebinds, used only through its attributes and its class's methods, and neither the
body nor any method it reaches stores ``attr`` (so the value returned is the one kept). The caller holds a result
until it returns when the call's statement is the only one binding its name, outside loops, or when it stores the
result into an item of a container of its own (``item_stores.py``) that only this statement stores into, bound
once outside loops, the item's index a name only the one ``for ... in range(...)`` around the call binds (each
iteration fills a slot of its own). No other call on the stream reads that result.
"""

from __future__ import annotations

import ast
from typing import Any

from codegen.index import scan
from codegen.index.returned import last_return
from codegen.index.walked import walked_of
from codegen.lower.flow.held_results import holds_until_return
from codegen.lower.flow.object_chains import class_named
from codegen.lower.flow.plain_methods import self_returned, unchanged_attribute
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state_keeps import given_arguments

__all__ = ["held_state"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Attr = tuple[str, str]  # a parameter of the callee, and the attribute of its object returned
_STREAM_DECORATORS = frozenset({"on_stream", "after", "records", "core_limit"})


def held_state(
    index: Any, here: tuple[str, ast.Module], fn: _Function, sites: list[Site]
) -> dict[ast.expr, frozenset[str]]:
    """For each planned call of ``fn`` with named state keeps: those the caller holds through the call's results
    until it returns (their ``record_stream`` is not needed)."""
    found: dict[ast.expr, frozenset[str]] = {}
    for site in sites:
        callee = _callee(index, here, site) if site.state_keeps else None
        if callee is None or getattr(site.callee, "class_level", True) or not _plain_stream(callee[1]):
            continue
        held = frozenset(
            k for k, slot in _returned_keeps(index, here, site, callee) if holds_until_return(fn, site, slot, sites)
        )
        if held:
            found[site.call.call] = held
    return found


def _plain_stream(fn: _Function) -> bool:
    """The callee's decorators are only stream ones (no ``keep_output``: a clone is not the tensor kept), and its
    body calls nothing but its parameters' methods and torch."""
    names = [_name(d.func if isinstance(d, ast.Call) else d) or getattr(d, "attr", "") for d in fn.decorator_list]
    if any(n not in _STREAM_DECORATORS for n in names):
        return False
    params = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)[1:]} | {"torch"}
    return all(
        isinstance(c.func, ast.Attribute) and _root(c.func) in params for s in fn.body for c in walked_of(s, ast.Call)
    )


def _callee(index: Any, here: tuple[str, ast.Module], site: Site) -> tuple[str, _Function] | None:
    module, _, qualname = site.call.resolved.key.partition(":")
    tree = here[1] if module == here[0] else getattr(getattr(index, "returns", None), "tree_of", lambda _: None)(module)
    fn = scan.functions_by_qualname(tree).get(qualname) if tree is not None else None
    return (module, fn) if fn is not None else None


def _returned_keeps(
    index: Any, here: tuple[str, ast.Module], site: Site, callee: tuple[str, _Function]
) -> list[tuple[str, ast.expr]]:
    """(the state keep, the target slot of the call's statement holding it) for each keep returned as it came."""
    module, fn = callee
    values = _returned(index, here, module, fn)
    slots = _slots(site.stmt, len(values))
    given = given_arguments(site.call.call, fn)
    found: list[tuple[str, ast.expr]] = []
    for value, slot in zip(values, slots or [], strict=False):
        argument = given.get(value[0]) if value is not None else None
        keep = f"{ast.unparse(argument)}.{value[1]}" if argument is not None and value is not None else ""
        if keep in site.state_keeps:
            found.append((keep, slot))
    return found


def _returned(index: Any, here: tuple[str, ast.Module], module: str, fn: _Function) -> list[_Attr | None]:
    """What each value ``fn`` returns is: an attribute of a parameter's object, as it came (None: anything else)."""
    last = last_return(fn)
    value = last.value if last is not None else None
    if value is None:
        return []
    params = _params(fn)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and _name(value.func.value) in params:
        param = _name(value.func.value)
        cls = _class(index, here, module, params[param])
        if cls is None:
            return []
        return [
            (param, a) if a and unchanged_attribute(fn, param, a, cls) else None
            for a in self_returned(cls, value.func.attr)
        ]
    elts = value.elts if isinstance(value, ast.Tuple) else [value]
    return [_attribute(index, here, module, fn, params, e) for e in elts]


def _attribute(
    index: Any, here: tuple[str, ast.Module], module: str, fn: _Function, params: dict[str, str], node: ast.expr
) -> _Attr | None:
    if not (isinstance(node, ast.Attribute) and _name(node.value) in params):
        return None
    param = _name(node.value)
    cls = _class(index, here, module, params[param])
    return (param, node.attr) if cls is not None and unchanged_attribute(fn, param, node.attr, cls) else None


def _params(fn: _Function) -> dict[str, str]:
    """The annotated parameters (not ``self``) nothing in the body rebinds, with their annotation's text."""
    bound = {n.id for n in walked_of(fn, ast.Name) if not isinstance(n.ctx, ast.Load)}
    bound |= {name for n in walked_of(fn, (ast.Global, ast.Nonlocal)) for name in n.names}  # type: ignore[attr-defined]
    params = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs][1:]
    return {p.arg: ast.unparse(p.annotation) for p in params if p.annotation is not None and p.arg not in bound}


def _class(index: Any, here: tuple[str, ast.Module], module: str, written: str) -> ast.ClassDef | None:
    """The plain class (no base, keyword or decorator) the annotation ``written`` names in ``module``."""
    found = class_named(index, here, module, written.strip("'\""))
    cls = found[1] if found is not None else None
    return cls if cls is not None and not (cls.bases or cls.keywords or cls.decorator_list) else None


def _slots(stmt: ast.stmt, count: int) -> list[ast.expr] | None:
    """The target holding each returned value: one target holds the whole tuple, a tuple of targets one each."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target = stmt.targets[0]
    if not isinstance(target, ast.Tuple):
        return [target] * count
    return list(target.elts) if len(target.elts) == count else None


def _root(node: ast.expr) -> str:
    """The name a chain of attributes starts from."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return _name(node)


def _name(node: ast.expr) -> str:
    return node.id if isinstance(node, ast.Name) else ""
