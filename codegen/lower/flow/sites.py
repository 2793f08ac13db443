"""The planned calls of one caller: for each, its callee, guard, arguments and the names its statement binds.

A call is planned when a plain statement binds (or drops) its result and the caller can read the
callee's guard; the others are left as they are (they run on their caller's stream).
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.arguments import Argument, arguments
from codegen.lower.flow.body_reads import callee_reads
from codegen.lower.flow.callees import Resolved
from codegen.lower.flow.callsites import CallSite
from codegen.lower.flow.exprs import bound_names, data_reads
from codegen.lower.flow.guards import CallGuard, read_guard
from codegen.lower.flow.item_stores import item_names
from codegen.lower.flow.state_access import state_reads
from codegen.lower.flow.transfer import SiteView
from codegen.lower.flow.view_roots import alias_sources

__all__ = ["Site", "plan_site"]


@attrs.frozen(kw_only=True)
class Site:
    index: int
    stmt: ast.stmt
    call: CallSite
    callee: object  # the run index's CalleeInfo
    guard: CallGuard
    args: tuple[Argument, ...]
    names: frozenset[str]
    writes: frozenset[str] = frozenset()  # the caller's names whose memory the call writes in place
    state_keeps: tuple[str, ...] = ()  # tensors it reads through objects the caller changes (state_keeps.py)
    state_inputs: frozenset[str] = frozenset()  # the caller's names holding those objects (the fork orders them)

    @property
    def tag(self) -> str:
        return self.callee.tag  # type: ignore[attr-defined]

    def state_read(self, methods: frozenset[str]) -> frozenset[str]:
        """What of objects' state the call reads: its arguments' attribute chains (on the caller's stream), and
        the state of its object its body reads (each chain whole: ``body_reads.py``) or writes (on its own
        stream)."""
        nodes = [*self.call.call.args, *(k.value for k in self.call.call.keywords)]
        found = set().union(*(state_reads(n, methods) for n in nodes))
        receiver = self.call.resolved.receiver
        body = callee_reads(self.callee) | self.callee.writes_state  # type: ignore[attr-defined]
        if receiver and body:
            found |= {f"{receiver}.*"} if "*" in body or "." in receiver else {f"{receiver}.{a}" for a in body}
        return frozenset(found)

    def view(self, methods: frozenset[str] = frozenset(), *, guard_changes: bool = True) -> SiteView:
        """``guard_changes``: what the guard reads may differ between two calls of the site (the planner knows)."""
        bare = frozenset(a.name for a in self.args if a.bare and a.name)
        inputs = frozenset().union(*({a.name} if a.bare and a.name else data_reads(a.node) for a in self.args))
        return SiteView(
            index=self.index,
            names=self.names,
            bare=bare,
            reads=_call_reads(self.call.call, bare),
            guarded=self.guard.dynamic and guard_changes,
            inputs=inputs,
            event=self.callee.key,  # type: ignore[attr-defined]
            state=self.state_read(methods),
            writes=self.writes,
            state_writes=frozenset(_state_names(self.callee.writes_state, self.call.resolved.receiver)),  # type: ignore[attr-defined]
        )


def plan_site(
    index: int,
    stmt: ast.stmt,
    site: CallSite,
    callee: object,
    *,
    same_module: bool,
    caller_locals: frozenset[str],
    receiver: str | None,
    changed: frozenset[str] = frozenset(),
) -> Site:
    """The call ``site`` (statement ``stmt``) of ``callee`` as the planner reads it: its guard, its arguments, the
    names it makes anew."""
    signature, resolved = callee.signature, site.resolved  # type: ignore[attr-defined]
    when = callee.when  # type: ignore[attr-defined]
    guard = read_guard(when, site.call, resolved, signature, same_module=same_module, caller_locals=caller_locals)
    args = arguments(
        site.call, signature, explicit_receiver=resolved.explicit_receiver, receiver=receiver, changed=changed
    )
    names, writes = _made(stmt, args, callee, resolved)
    return Site(
        index=index, stmt=stmt, call=site, callee=callee, guard=guard, args=tuple(args), names=names, writes=writes
    )


def _made(
    stmt: ast.stmt, args: list[Argument], callee: object, resolved: Resolved
) -> tuple[frozenset[str], frozenset[str]]:
    """The names the call makes anew (the result's, those it writes in place, the state of its object it writes),
    and the caller's names it writes in place (its object's state reaches the caller through the names)."""
    written = _written_arguments(args, callee, resolved.explicit_receiver)
    state = callee.writes_state if resolved.receiver else frozenset()  # type: ignore[attr-defined]
    return _bound(stmt) | written | _state_names(state, resolved.receiver), written


def _call_reads(call: ast.Call, bare: frozenset[str]) -> frozenset[str]:
    """What the call reads as values, but for the names passed whole: its callee's expression, its other arguments."""
    reads = set(data_reads(call.func))
    values = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.args]
    for value in [*values, *(keyword.value for keyword in call.keywords)]:
        if not (isinstance(value, ast.Name) and value.id in bare):
            reads |= data_reads(value)
    return frozenset(reads)


def _bound(stmt: ast.stmt) -> frozenset[str]:
    """The names an assignment of the call's result binds, and the containers it stores items of (``xs[i] =
    ...``: a later read of ``xs`` may read the result, ``item_stores.py``)."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
    bound = frozenset().union(*(bound_names(t) for t in targets)) if targets else frozenset()
    return bound | item_names(stmt)


def _state_names(state: frozenset[str], obj: str | None) -> set[str]:
    """How the caller reads the state of ``obj`` the callee writes: ``self.buf`` (or ``self.sub.buf``); an unnamed
    write (``*``), or an object reached through an attribute: anything of it."""
    if not state or not obj:
        return set()
    return {obj.split(".")[0]} if "*" in state or "." in obj else {f"{obj}.{attr}" for attr in state}


def _written_arguments(args: list[Argument], callee: object, explicit_receiver: bool) -> frozenset[str]:
    """The caller's names whose memory goes to parameters the callee writes in place (passed whole, or a view:
    ``x[0]``, ``x.view(-1)``): the call makes them anew, and may not write them while another stream reads them."""
    writes = set(callee.writes)  # type: ignore[attr-defined]
    if not writes:
        return frozenset()
    params = [p.name for p in callee.signature.params]  # type: ignore[attr-defined]
    offset = 1 if explicit_receiver else 0
    found: set[str] = set()
    for argument in args:
        slot = argument.slot
        name = slot if isinstance(slot, str) else (params[slot - offset] if 0 <= slot - offset < len(params) else None)
        if name in writes:
            found |= {argument.name} if argument.bare and argument.name else alias_sources(argument.node)
    return frozenset(found)
