"""A caller's planned calls as sites: only those whose guard the caller can read.

A call whose guard is statically off is never made, so it is left out. A call whose guard the caller cannot read
(a local of the callee, an expression it cannot spell) is left to the callee, with a warning (NPD508): it runs on
its caller's stream and overlaps nothing. A guard on a global of the callee's module is read through that module
(always its current value), imported into the caller's module where it is not yet. The tensors a call reads
through objects the caller changes are named where their class says which (``state_keeps.py``): the site keeps
those, and the object it is given is no longer walked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import attrs

from codegen.index.walked import walked_of
from codegen.lower.flow.body_reads import callee_reads
from codegen.lower.flow.caller_module import CallerModule
from codegen.lower.flow.callsites import CallSite
from codegen.lower.flow.changed_objects import changed_objects, gives_own_changed, outside
from codegen.lower.flow.counted_state import counted_args, loop_counts
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.helper_writes import stream_call_writes
from codegen.lower.flow.imported_writes import ModuleFunctions, module_functions
from codegen.lower.flow.rebound_state import rebound_keeps
from codegen.lower.flow.sites import Site, plan_site
from codegen.lower.flow.unkept_state import named_state
from npudsl import codes

__all__ = ["caller_sites", "receiver_of"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def caller_sites(module: CallerModule, qualname: str, fn: _Function, calls: list[CallSite]) -> Iterator[Site]:
    """The sites of ``calls`` the caller ``fn`` plans, numbered in order."""
    local = frozenset({a.arg for a in walked_of(fn.args, ast.arg)} | {n for stmt in fn.body for n in bound_names(stmt)})
    receiver = receiver_of(qualname, fn)
    changed = changed_objects(fn, receiver)
    functions = module_functions(module.index, module.ir.module_name, module.tree)
    counts = loop_counts(fn)
    count = 0
    for call in calls:
        site = _reached(_site(module, count, call, fn, local, receiver, changed), functions, qualname, receiver)
        site = counted_args(site, receiver, counts)  # ``self.layers[i + 1].qweight``: state, made by no op
        site = _rebound(site, fn, receiver, functions, qualname)
        if site.guard.static is False or _unreadable(module, call, site):
            continue
        count += 1
        yield _through_module(module, site) if site.guard.module_root else site


def _site(
    module: CallerModule,
    count: int,
    call: CallSite,
    fn: _Function,
    local: frozenset[str],
    receiver: str | None,
    changed: frozenset[str],
) -> Site:
    """The call as the ``count``-th planned site of its caller (whose names are ``local``; ``changed``: the objects
    it changes itself, ``changed_objects``)."""
    callee = module.index.callees[call.key]  # type: ignore[attr-defined]
    assert call.stmt is not None
    same_module = callee.module == module.ir.module_name
    here = (module.ir.module_name, module.tree)
    # a caller that changes no object it gives leaves nothing to name (``unkept_state.py``): the site as it is
    asks = changed or gives_own_changed(fn, receiver, call.call)
    named = named_state(module.index, here, fn, receiver, call.call, call.resolved) if asks else None
    changed = outside(changed, named.inputs) if named is not None else changed
    site = plan_site(
        count, call.stmt, call, callee, same_module=same_module, caller_locals=local, receiver=receiver, changed=changed
    )
    if named is None:
        return site
    held = named.inputs | named.held  # the caller's next use of such an object waits for the call (it may write
    # what the call reads)
    return attrs.evolve(site, state_keeps=named.keeps, state_inputs=named.inputs, names=site.names | held)


def _reached(site: Site, functions: ModuleFunctions, qualname: str, receiver: str | None) -> Site:
    """The site, with what its callee's body writes through the run's other modules too (``helper_writes.py``)."""
    more = stream_call_writes(functions, qualname, receiver, site.call.call) - site.writes
    return attrs.evolve(site, names=site.names | more, writes=site.writes | more) if more else site


def _rebound(site: Site, fn: _Function, receiver: str | None, functions: ModuleFunctions, qualname: str) -> Site:
    """The site, keeping the state it reads that the caller made before it and points elsewhere after it
    (``rebound_state.py``); its body's reads are paths (``body_reads.callee_reads``: ``a.y``, not all of ``a``)."""
    reads = callee_reads(site.callee)
    owner = qualname.rpartition(".")[0] or None
    keeps = rebound_keeps(fn, receiver, site.call.call, reads, functions, owner)
    return attrs.evolve(site, state_keeps=(*site.state_keeps, *keeps)) if keeps else site


def _unreadable(module: CallerModule, call: CallSite, site: Site) -> bool:
    """The caller cannot read the call's guard: it is left to the callee (warned)."""
    if not site.guard.unreadable:
        return False
    module.warn(
        call.call,
        codes.UNREADABLE_GUARD,
        f"{call.spelled} cannot be joined here: {site.guard.unreadable}",
        "the call runs on its caller's stream, so it overlaps nothing; pass the flag as a plain "
        "argument, or root the guard at self",
    )
    return True


def receiver_of(qualname: str, fn: _Function) -> str | None:
    """The caller's ``self`` (none for a module-level function or a staticmethod)."""
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    positional = [*fn.args.posonlyargs, *fn.args.args]
    return positional[0].arg if "." in qualname and positional and not static else None


def _through_module(module: CallerModule, site: Site) -> Site:
    """A guard on a global of the callee's module, read through that module (always its current value)."""
    callee_module = site.callee.module  # type: ignore[attr-defined]
    alias, line = module.names.imported(callee_module)
    if line:
        module.imports.append(line)
    assert site.guard.expr is not None
    return attrs.evolve(site, guard=attrs.evolve(site.guard, expr=f"{alias}.{site.guard.expr}", module_root=None))
