"""Plan every caller of a module: group its resolved stream calls by function, plan each function.

A call whose result a plain statement binds or drops, of an automatic stream function whose guard the
caller can read, is planned (:mod:`codegen.lower.flow.planner`). A call whose guard it cannot read is left
to the callee (NPD508). GE orders streams through data: its calls only get the fork's control edge.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Iterator

import attrs

from codegen.check.diagnostics import Diagnostic, Severity
from codegen.frontend.ir import ModuleIR
from codegen.frontend.positions import Positions
from codegen.index import scan
from codegen.index.returns import run_returns
from codegen.index.walked import walked, walked_of
from codegen.lower.flow.caller_context import CallerContext
from codegen.lower.flow.caller_facts import SiteEvents
from codegen.lower.flow.callsites import CallSite, find_calls, own_calls
from codegen.lower.flow.exprs import bound_names
from codegen.lower.flow.ge import fork_waits
from codegen.lower.flow.ge_layers import submodules
from codegen.lower.flow.guard_alias import guard_aliases
from codegen.lower.flow.lifetime import EventFacts
from codegen.lower.flow.manual import with_manual_sites
from codegen.lower.flow.none_facts import never_none
from codegen.lower.flow.planner import plan_caller
from codegen.lower.flow.returned_inputs import returned_inputs
from codegen.lower.flow.site_sync import Flags
from codegen.lower.flow.sites import Site, plan_site
from codegen.lower.flow.stream_free import StreamFree
from codegen.lower.flow.tensors import certain_tensors, local_returns
from codegen.lower.hygiene import ModuleNames
from codegen.lower.plan import CallerPlan, Cond, CurrentStream
from npudsl import codes

__all__ = ["Callers", "plan_callers"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class Callers:
    plans: dict[str, CallerPlan]
    imports: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]


@attrs.define(eq=False)
class _Module:
    ir: ModuleIR
    tree: ast.Module
    index: object  # the RunIndex
    names: ModuleNames
    positions: Positions
    imports: list[str] = attrs.Factory(list)
    diagnostics: list[Diagnostic] = attrs.Factory(list)
    stream_free: StreamFree = attrs.field(init=False)
    _aliases: dict[tuple[str, str | None], dict[str, str]] = attrs.field(factory=dict, init=False)  # per class

    def __attrs_post_init__(self) -> None:
        self.stream_free = StreamFree(self.tree)

    def aliases(self, owner: str, receiver: str | None, sites: list[Site]) -> dict[str, str]:
        """Guards of ``owner``'s methods spelled otherwise that hold one value; read only where a guard is spelled
        on a submodule (``self.shared.multistream``), once per class."""
        if not any(s.guard.expr and s.guard.expr.count(".") >= 2 for s in sites):
            return {}
        if (owner, receiver) not in self._aliases:
            self._aliases[owner, receiver] = guard_aliases(self.tree, owner, receiver)
        return self._aliases[owner, receiver]

    def warn(self, node: ast.AST, code: str, message: str, hint: str) -> None:
        loc = self.positions.loc(node)
        self.diagnostics.append(
            Diagnostic(
                path=self.ir.path,
                line=loc.line,
                col=loc.col,
                code=code,
                message=message,
                hint=hint,
                severity=Severity.WARNING,
            )
        )


def plan_callers(
    ir: ModuleIR, tree: ast.Module, index: object, names: ModuleNames, positions: Positions, *, event_sync: bool
) -> Callers:
    module = _Module(ir=ir, tree=tree, index=index, names=names, positions=positions)
    nodes = scan.functions_by_qualname(tree)
    plans: dict[str, CallerPlan] = {}
    for qualname, calls in _by_caller(find_calls(ir.module_name, tree, index), index).items():  # type: ignore[arg-type]
        fn = nodes[qualname]
        sites = list(_sites(module, qualname, fn, calls))
        if sites:
            plans[qualname] = _plan(module, qualname, fn, sites, event_sync)
    return Callers(plans=plans, imports=tuple(dict.fromkeys(module.imports)), diagnostics=tuple(module.diagnostics))


def _by_caller(found: Iterable[CallSite], index: object) -> dict[str, list[CallSite]]:
    grouped: dict[str, list[CallSite]] = {}
    nested: dict[int, list[CallSite]] = {}
    for site in found:
        callee = index.callees[site.key]  # type: ignore[attr-defined]
        if callee.tag == "default" or callee.compiled_apart:
            continue
        if site.bindable:
            grouped.setdefault(site.caller, []).append(site)
        elif not callee.auto and site.stmt is not None:
            nested.setdefault(id(site.stmt), []).append(site)
    for sites in nested.values():
        if _whole_statement(sites, index):
            grouped.setdefault(sites[0].caller, []).extend(sites)
    return grouped


def _whole_statement(sites: list[CallSite], index: object) -> bool:
    """Manual calls nested in one simple statement (``return self.b(x, self.a(x))``) that are every call the
    statement makes, on one stream: the statement runs whole on that stream (no join to place, so nothing needs
    binding)."""
    stmt = sites[0].stmt
    assert stmt is not None
    callees = [index.callees[s.key] for s in sites]  # type: ignore[attr-defined]
    return (
        not hasattr(stmt, "body")
        and len(own_calls(stmt)) == len(sites)
        and len({(c.tag, c.when) for c in callees}) == 1
    )


def _barriers(found: Iterable[CallSite], index: object, qualname: str, fn: _Function) -> frozenset[ast.stmt]:
    """The statements of ``fn`` that call a function compiled apart (``torch.compiler.disable``): graph breaks."""
    calls = {
        id(s.call)
        for s in found
        if s.caller == qualname and index.callees[s.key].compiled_apart  # type: ignore[attr-defined]
    }
    return frozenset(
        stmt
        for stmt in walked_of(fn, ast.stmt)
        if not hasattr(stmt, "body") and any(id(node) in calls for node in walked(stmt))
    )


def _sites(module: _Module, qualname: str, fn: _Function, calls: list[CallSite]) -> Iterator[Site]:
    local = frozenset({a.arg for a in walked_of(fn.args, ast.arg)} | {n for stmt in fn.body for n in bound_names(stmt)})
    receiver = _receiver(qualname, fn)
    count = 0
    for call in calls:
        callee = module.index.callees[call.key]  # type: ignore[attr-defined]
        assert call.stmt is not None
        site = plan_site(
            count,
            call.stmt,
            call,
            callee,
            same_module=callee.module == module.ir.module_name,
            caller_locals=local,
            receiver=receiver,
        )
        if site.guard.static is False:
            continue
        if site.guard.unreadable:
            module.warn(
                call.call,
                codes.UNREADABLE_GUARD,
                f"{call.spelled} cannot be joined here: {site.guard.unreadable}",
                "the call runs on its caller's stream, so it overlaps nothing; pass the flag as a plain "
                "argument, or root the guard at self",
            )
            continue
        if site.guard.module_root:
            site = _through_module(module, site)
        count += 1
        yield site


def _receiver(qualname: str, fn: _Function) -> str | None:
    """The caller's ``self`` (none for a module-level function or a staticmethod)."""
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    positional = [*fn.args.posonlyargs, *fn.args.args]
    return positional[0].arg if "." in qualname and positional and not static else None


def _through_module(module: _Module, site: Site) -> Site:
    """A guard on a global of the callee's module, read through that module (always its current value)."""
    callee_module = site.callee.module  # type: ignore[attr-defined]
    alias, line = module.names.imported(callee_module)
    if line:
        module.imports.append(line)
    assert site.guard.expr is not None
    return attrs.evolve(site, guard=attrs.evolve(site.guard, expr=f"{alias}.{site.guard.expr}", module_root=None))


def _current(module: _Module, qualname: str) -> CurrentStream:
    own = next((f for f in module.ir.functions if f.qualname == qualname), None)
    if own is None or own.stream is None or own.stream.is_default:
        return CurrentStream()
    return CurrentStream(tag=own.stream.tag, when=Cond.of(own.stream.when.dotted if own.stream.when else None))


def _site_events(module: _Module) -> Callable[[Site], SiteEvents]:
    """The fork and join events of a call, defined by the caller's module (fresh names, the callee's tags)."""
    made: dict[str, SiteEvents] = {}

    def events(site: Site) -> SiteEvents:
        key = site.callee.key  # type: ignore[attr-defined]
        if key not in made:
            fork, join = site.callee.fork, site.callee.join  # type: ignore[attr-defined]
            made[key] = SiteEvents(
                fork=attrs.evolve(fork, var=module.names.global_name(fork.var)),
                join=attrs.evolve(join, var=module.names.global_name(join.var)),
            )
        return made[key]

    return events


def _plan(module: _Module, qualname: str, fn: _Function, sites: list[Site], event_sync: bool) -> CallerPlan:
    auto = _numbered(s for s in sites if s.callee.auto)  # type: ignore[attr-defined]
    manual = [s for s in sites if not s.callee.auto]  # type: ignore[attr-defined]
    receiver = _receiver(qualname, fn)
    if not event_sync:  # GE: what functions of other files of the run return makes single fork edges
        run = run_returns(module.index, module.ir.module_name, module.tree, qualname.rpartition(".")[0], receiver)
        returns = local_returns(module.tree, qualname, receiver, run)
        layers = submodules(module.tree, qualname, receiver)
        plan = fork_waits(fn, auto, method="." in qualname, returns=returns, flags=_flags(module), submodules=layers)
    else:
        returns = local_returns(module.tree, qualname, receiver)
        tensors = frozenset(certain_tensors(fn, method="." in qualname, returns=returns).values())
        found = find_calls(module.ir.module_name, module.tree, module.index)  # type: ignore[arg-type]  # searched once
        barriers = _barriers(found, module.index, qualname, fn)
        context = CallerContext(
            current=_current(module, qualname),
            flags=_flags(module),
            events=_site_events(module),
            tensors=tensors,
            barriers=barriers,
            methods=_methods(module.tree, qualname),
            receiver=receiver,
            free=functools.partial(module.stream_free.statement, qualname=qualname),
            aliases=module.aliases(qualname.rpartition(".")[0], receiver, auto),
            returns=never_none(module.tree, qualname, receiver),
            returned=returned_inputs(module.tree, module.index, module.ir.module_name, module.ir.functions, auto),
        )
        plan = plan_caller(fn, auto, context)
    owner = qualname.rpartition(".")[0] or None
    events = EventFacts.of(module.ir.functions, module.tree) if manual else None
    return with_manual_sites(
        fn, plan, manual, _flags(module), keep_alive=event_sync, receiver=receiver, events=events, owner=owner
    )


def _methods(tree: ast.Module, qualname: str) -> frozenset[str]:
    """The methods of the caller's class (a call of one may read any state of its object)."""
    owner = qualname.rpartition(".")[0]
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == owner]
    return frozenset(
        item.name for cls in classes for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
    )


def _numbered(sites: Iterable[Site]) -> list[Site]:
    return [attrs.evolve(s, index=i) for i, s in enumerate(sites)]


def _flags(module: _Module) -> Flags:
    """Fresh against every identifier of the module (the caller's among them) and every generated name."""
    return Flags(taken=set(module.names.generated.values()) | set(module.names.taken))
