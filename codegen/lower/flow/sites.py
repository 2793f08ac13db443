"""The planned calls of one caller: for each, its callee, guard, arguments and the names its statement binds.

A call is planned when a plain statement binds (or drops) its result and the caller can read the
callee's guard; the others are left as they are (they run on their caller's stream).
"""

from __future__ import annotations

import ast

import attrs

from codegen.lower.flow.arguments import Argument, arguments
from codegen.lower.flow.callsites import CallSite
from codegen.lower.flow.exprs import bound_names, data_reads
from codegen.lower.flow.guards import CallGuard, read_guard
from codegen.lower.flow.transfer import SiteView
from codegen.lower.flow.view_roots import alias_sources
from codegen.lower.flow.writes import state_reads

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

    @property
    def tag(self) -> str:
        return self.callee.tag  # type: ignore[attr-defined]

    def state_read(self, methods: frozenset[str]) -> frozenset[str]:
        """What of objects' state the call reads: its arguments' attribute chains (on the caller's stream), and
        the state of its object its body reads or writes (on its own stream)."""
        nodes = [*self.call.call.args, *(k.value for k in self.call.call.keywords)]
        found = set().union(*(state_reads(n, methods) for n in nodes))
        receiver = self.call.resolved.receiver
        body = self.callee.reads_state | self.callee.writes_state  # type: ignore[attr-defined]
        if receiver and body:
            found |= {f"{receiver}.*"} if "*" in body or "." in receiver else {f"{receiver}.{a}" for a in body}
        return frozenset(found)

    def view(self, methods: frozenset[str] = frozenset(), *, guard_changes: bool = True) -> SiteView:
        """``guard_changes``: what the guard reads may differ between two calls of the site (the planner knows)."""
        bare = frozenset(a.name for a in self.args if a.bare and a.name)
        reads = set(data_reads(self.call.call.func))
        for arg in self.call.call.args:
            value = arg.value if isinstance(arg, ast.Starred) else arg
            if not (isinstance(value, ast.Name) and value.id in bare):
                reads |= data_reads(value)
        for keyword in self.call.call.keywords:
            if not (isinstance(keyword.value, ast.Name) and keyword.value.id in bare):
                reads |= data_reads(keyword.value)
        guarded = self.guard.dynamic and guard_changes
        inputs = frozenset().union(*({a.name} if a.bare and a.name else data_reads(a.node) for a in self.args))
        return SiteView(
            index=self.index,
            names=self.names,
            bare=bare,
            reads=frozenset(reads),
            guarded=guarded,
            inputs=inputs,
            event=self.callee.key,  # type: ignore[attr-defined]
            state=self.state_read(methods),
            writes=self.writes,
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
    signature = callee.signature  # type: ignore[attr-defined]
    guard = read_guard(
        callee.when,  # type: ignore[attr-defined]
        site.call,
        site.resolved,
        signature,
        same_module=same_module,
        caller_locals=caller_locals,
    )
    explicit = site.resolved.explicit_receiver
    args = arguments(site.call, signature, explicit_receiver=explicit, receiver=receiver, changed=changed)
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
    names = frozenset().union(*(bound_names(t) for t in targets)) if targets else frozenset()
    written = _written_arguments(args, callee, site.resolved.explicit_receiver)
    names |= written
    receiver = site.resolved.receiver
    if callee.writes_state and receiver:  # type: ignore[attr-defined]
        # the caller reads that state as ``self.buf`` (or ``self.sub.buf``); an unnamed write: anything of it
        written = callee.writes_state  # type: ignore[attr-defined]
        names |= (
            {receiver.split(".")[0]}
            if "*" in written or "." in receiver
            else {f"{receiver}.{attr}" for attr in written}
        )
    return Site(
        index=index, stmt=stmt, call=site, callee=callee, guard=guard, args=tuple(args), names=names, writes=written
    )


def _written_arguments(args: list[Argument], callee: object, explicit_receiver: bool) -> frozenset[str]:
    """The caller's names whose memory goes to parameters the callee writes in place (passed whole, or a view:
    ``x[0]``, ``x.view(-1)``): the call makes them anew, and may not write them while another stream reads them."""
    writes = set(callee.writes)  # type: ignore[attr-defined]
    if not writes:
        return frozenset()
    params = list(callee.signature.params)  # type: ignore[attr-defined]
    offset = 1 if explicit_receiver else 0
    found: set[str] = set()
    for argument in args:
        slot = argument.slot
        name = (
            slot
            if isinstance(slot, str)
            else (params[slot - offset].name if 0 <= slot - offset < len(params) else None)
        )
        if name in writes:
            found |= {argument.name} if argument.bare and argument.name else alias_sources(argument.node)
    return frozenset(found)
