"""Plan every caller of a module: group its resolved stream calls by function, plan each function.

A call whose result a plain statement binds or drops, of an automatic stream function whose guard the
caller can read, is planned (:mod:`codegen.lower.flow.planner`; which calls: ``caller_groups.py``, ``caller_sites.py``).
A call whose guard it cannot read is left to the callee (NPD508). GE orders streams through data: its calls only get
the fork's control edge.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

import attrs

from codegen.check.diagnostics import Diagnostic
from codegen.frontend.ir import ModuleIR
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.returns import run_returns
from codegen.lower.flow.caller_context import event_context
from codegen.lower.flow.caller_groups import by_caller
from codegen.lower.flow.caller_module import CallerModule
from codegen.lower.flow.caller_sites import caller_sites, receiver_of
from codegen.lower.flow.callsites import find_calls
from codegen.lower.flow.ge import fork_waits
from codegen.lower.flow.ge_if_block import ge_if_in_block
from codegen.lower.flow.ge_layers import submodules
from codegen.lower.flow.lifetime import EventFacts
from codegen.lower.flow.local_returns import local_returns
from codegen.lower.flow.manual import with_manual_sites
from codegen.lower.flow.object_state import object_state
from codegen.lower.flow.planner import hoisted_plan, plan_caller
from codegen.lower.flow.reorder_hints import split_chains
from codegen.lower.flow.sites import Site
from codegen.lower.hygiene import ModuleNames
from codegen.lower.plan import CallerPlan, EventRef

__all__ = ["Callers", "plan_callers"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class Callers:
    plans: dict[str, CallerPlan]
    imports: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]


def plan_callers(
    ir: ModuleIR, tree: ast.Module, index: object, names: ModuleNames, positions: Positions, *, event_sync: bool
) -> Callers:
    module = CallerModule(ir=ir, tree=tree, index=index, names=names, positions=positions)
    nodes = scan.functions_by_qualname(tree)
    plans: dict[str, CallerPlan] = {}
    for qualname, calls in by_caller(find_calls(ir.module_name, tree, index), index).items():  # type: ignore[arg-type]
        fn = nodes[qualname]
        sites = list(caller_sites(module, qualname, fn, calls))
        if sites:
            plans[qualname] = _plan(module, qualname, fn, sites, event_sync)
    return Callers(plans=plans, imports=tuple(dict.fromkeys(module.imports)), diagnostics=tuple(module.diagnostics))


def _plan(module: CallerModule, qualname: str, fn: _Function, sites: list[Site], event_sync: bool) -> CallerPlan:
    """The automatic calls planned by the target's kind of sync, then the manual calls added to that plan."""
    auto = _numbered(s for s in sites if s.callee.auto)  # type: ignore[attr-defined]
    manual = [s for s in sites if not s.callee.auto]  # type: ignore[attr-defined]
    receiver = receiver_of(qualname, fn)
    if event_sync:
        fixed = frozenset(s.stmt for s in manual)
        context = event_context(module, qualname, fn, receiver, auto)
        second = functools.partial(_second_join, module)  # events only: a micro-batch's own join (item_slots.py)
        plan = plan_caller(fn, auto, attrs.evolve(context, slot_events=second), fixed)
        split_chains(fn, plan, module.warn)
    else:
        plan = _ge_plan(module, qualname, fn, receiver, auto, frozenset(s.stmt for s in manual))
    owner = qualname.rpartition(".")[0] or None
    events = EventFacts.of(module.ir.functions, module.tree) if manual else None
    return with_manual_sites(
        fn, plan, manual, module.flags(), keep_alive=event_sync, receiver=receiver, events=events, owner=owner
    )


def _ge_plan(
    module: CallerModule,
    qualname: str,
    fn: _Function,
    receiver: str | None,
    auto: list[Site],
    fixed: frozenset[ast.stmt],
) -> CallerPlan:
    """GE: what functions of other files of the run return makes single fork edges; a call moves up into the block
    of the call before it on its stream as with events (``hoist.py``)."""
    run = run_returns(module.index, module.ir.module_name, module.tree, qualname.rpartition(".")[0], receiver)
    returns = local_returns(module.tree, qualname, receiver, run, index=module.index, module=module.ir.module_name)
    layers = submodules(module.tree, qualname, receiver, index=module.index, module=module.ir.module_name)
    method = "." in qualname
    owner = qualname.rpartition(".")[0]
    objects = object_state(module.index, module.ir.module_name, module.tree, owner, receiver) if receiver else None

    def plan_of(body: _Function) -> CallerPlan:
        flags = module.flags()
        plan = fork_waits(body, auto, method=method, returns=returns, flags=flags, submodules=layers, objects=objects)
        return ge_if_in_block(body, plan)  # an ``if`` switched with the call before it

    if len(auto) < 2:
        return plan_of(fn)
    return hoisted_plan(fn, auto, event_context(module, qualname, fn, receiver, auto), plan_of, fixed)


def _second_join(module: CallerModule, site: Site) -> EventRef:
    return module.site_events({site.index: 2})(site).join


def _numbered(sites: Iterable[Site]) -> list[Site]:
    return [attrs.evolve(s, index=i) for i, s in enumerate(sites)]
