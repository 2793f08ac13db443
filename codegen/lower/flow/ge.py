"""GE: each planned call on its stream at the call site, its fork as one control edge.

GE orders every cross-stream data dependency itself and plans the memory of the whole graph, so the
join and the lifetime of tensors need nothing. What data does not say is the fork: the side stream's
first op waits for the caller's prior work. Where both ends are certainly tensors (``tensors.py``), the
edge is the real engines' ``npu_wait_tensor(<the call's input>, <the tensor the caller made last>)`` (``ge_last.py``);
where the call reads the caller's last tensor itself, nothing (the read is the edge); where only the
caller's tensor is certain, ``torchair.ops.wait([<that tensor>])`` first on the side stream (the
converter makes the side stream's next op wait for its producer, fx2ge_converter.py); elsewhere
(tuples, subscripts, submodule calls) it is torchair's mode-agnostic token: ``record()`` on the caller's
stream just before the switch, ``wait([token])`` first on the side stream. Calls that follow one another
with nothing between them share one fork, and need none of their own when their stream, or a result they
read, already comes after it. No edge either where the caller's earlier work orders nothing the call needs
or already comes first: none ran (``ge_before.py``), the call reads only what its function was given
(``ge_given.py``) or what earlier calls on its stream made (``ge_own.py``), or on every path the caller's last
work made what it reads (``ge_reads.py``): ``ge_unforked.py`` asks them in turn. Calls decided by the middle two
do not come after all the caller's work, so no later call leans on them; nor do calls that read only results of
calls on other streams (``ge_own.py``). The walk back passes planned calls switched whenever this one is (they
are no work of the caller's stream).
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import Tensorness
from codegen.lower.flow.arguments import Argument
from codegen.lower.flow.exprs import bound_names, runs_op
from codegen.lower.flow.ge_chain import bare_inputs, chain_glue, chain_made, ordered_by_chain
from codegen.lower.flow.ge_last import binds_a_call, last_tensor, tensor_above
from codegen.lower.flow.ge_own import same_guard
from codegen.lower.flow.ge_returned import tensor_names
from codegen.lower.flow.ge_unforked import GeCaller, unforked
from codegen.lower.flow.object_state import ObjectState
from codegen.lower.flow.sites import Site
from codegen.lower.flow.tensor_bindings import certain_tensors
from codegen.lower.flow.tensors import Returns
from codegen.lower.flow.wraps import statement_blocks
from codegen.lower.plan import Anchor, CallerPlan, Cond, ForkToken, ForkWait, Step, SwitchStream, Wrap

__all__ = ["fork_waits"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def fork_waits(
    fn: _Function,
    sites: list[Site],
    *,
    method: bool,
    returns: Returns,
    flags: object,
    submodules: frozenset[str] = frozenset(),
    objects: ObjectState | None = None,
) -> CallerPlan:
    """The GE plan of one caller (see above); ``submodules``: its object's attributes that hold one
    (``ge_layers.py``); ``objects``: its object as ``object_state.py`` reads it."""
    caller = GeCaller(
        fn=fn,
        sites=sites,
        ordered=sorted(sites, key=lambda s: (s.stmt.lineno, s.stmt.col_offset)),
        blocks=statement_blocks(fn),
        parents={stmt: parent for parent in ast.walk(fn) for stmt in _children(parent)},
        made=certain_tensors(fn, method=method, returns=returns),
        receiver=fn.args.args[0].arg if method and fn.args.args else None,
        submodules=submodules,
        indices=tensor_names(fn, method=method, returns=returns),
        objects=objects,
    )
    planning = _Planning(caller=caller, flags=flags)
    for site in caller.ordered:  # in source order
        if site.guard.hoist is None:  # else a guard read from an argument expression: it stays on the caller's stream
            planning.plan(site)
    return CallerPlan(steps=planning.steps, wraps=planning.wraps)


@attrs.define(eq=False)
class _Planning:
    """One caller's calls planned in source order, with what the earlier ones left."""

    caller: GeCaller
    flags: object
    steps: dict[Anchor, tuple[Step, ...]] = attrs.Factory(dict)
    wraps: dict[ast.stmt, Wrap] = attrs.Factory(dict)
    previous: tuple[ast.stmt, str | None, str] | None = None  # the last wrap: statement, guard, its fork's token
    chain: list[Site] = attrs.Factory(list)  # the calls just before this one, one right after another, one guard
    after_all: set[ast.stmt] = attrs.Factory(set)  # the calls that come after all the caller's work before them

    def plan(self, site: Site) -> None:
        """The call's wrap, and those of the views between it and the chain's call before it."""
        when = Cond.of(site.guard.expr) if site.guard.dynamic else None
        for stmt in self._glue(site):  # views of the chain's results between two of its calls: in their block
            self.wraps[stmt] = Wrap(switch=_switch(site, when))
        enter, follows_all = self._enter(site, when)
        if follows_all:
            self.after_all.add(site.stmt)
        if self.previous is not None:
            self.previous = (site.stmt, self.previous[1], self.previous[2])
        self.wraps[site.stmt] = Wrap(switch=_switch(site, when), enter=enter)

    def _glue(self, site: Site) -> list[ast.stmt]:
        """The statements between the chain's last call and ``site``, where ``site`` continues the chain."""
        chain, block = self.chain, self.caller.blocks.get(site.stmt, [])
        glue = (
            chain_glue(block, chain[-1].stmt, site.stmt, chain_made(chain))
            if chain and same_guard(chain[-1], site)
            else None
        )
        self.chain = [*chain, site] if glue is not None else [site]
        return glue or []

    def _enter(self, site: Site, when: Cond | None) -> tuple[tuple[ForkWait | ForkToken, ...], bool]:
        """The call's fork, and whether the call comes after all the caller's work before it (what a fork does)."""
        caller = self.caller
        dependency = last_tensor(caller.blocks.get(site.stmt, []), site.stmt, caller.site_stmts, caller.made)
        dependency = dependency or tensor_above(
            site.stmt, caller.blocks, caller.parents, caller.site_stmts, caller.made
        )
        if ordered_by_chain(site, [e for e in self.chain[:-1] if e.stmt in self.after_all]):
            return (), True  # its stream, or a result it reads, already comes after the fork of an earlier call
        follows_all = unforked(caller, site, dependency, self.after_all)
        if follows_all is not None:
            self.previous = None
            return (), follows_all
        return (self._edge(site, when, dependency),), True

    def _edge(self, site: Site, when: Cond | None, dependency: str | None) -> ForkWait | ForkToken:
        """The wait that orders the call after the caller's last work."""
        made = self.caller.made
        tensor = next((a.name for a in site.args if a.bare and a.name and _certain(a, made)), None)
        if tensor is not None and dependency is not None and dependency != tensor:
            edge: ForkWait | ForkToken = ForkWait(tensor=tensor, dependency=dependency, when=when)
        elif dependency is not None and dependency not in bare_inputs(site):  # wait for the caller's tensor itself
            edge = ForkToken(name=dependency, wait=True, when=when)
        elif made_last := _made_last(site, self.caller.blocks.get(site.stmt, []), self.caller.site_stmts, made):
            edge = ForkToken(name=made_last[0], wait=True, when=when, also=made_last[1:])  # their producers
        else:
            return self._token(site, when)
        self.previous = None
        return edge

    def _token(self, site: Site, when: Cond | None) -> ForkToken:
        """The wait for a token the caller records just before the call; the one before it shares it when nothing
        runs in between under the same guard."""
        previous, block = self.previous, self.caller.blocks.get(site.stmt, [])
        if previous is not None and _follows(block, previous[0], site.stmt) and previous[1] == site.guard.expr:
            return ForkToken(name=previous[2], wait=True, when=when)
        token = self.flags.fresh("fork_token")  # type: ignore[attr-defined]
        self.steps[("before", site.stmt, "")] = (ForkToken(name=token, wait=False, when=when),)
        self.previous = (site.stmt, site.guard.expr, token)
        return ForkToken(name=token, wait=True, when=when)


def _switch(site: Site, when: Cond | None) -> SwitchStream:
    return SwitchStream(tag=site.tag, priority=site.callee.priority, when=when)  # type: ignore[attr-defined]


def _children(node: ast.AST) -> list[ast.stmt]:
    if not isinstance(node, (ast.stmt, ast.excepthandler, ast.match_case)):
        return []  # an expression's ``body`` (``IfExp``, ``Lambda``) holds no statements
    return [s for field in ("body", "orelse", "finalbody") for s in getattr(node, field, None) or []]


def _made_last(site: Site, block: list[ast.stmt], site_stmts: set[ast.stmt], made: dict[ast.stmt, str]) -> tuple:
    """The call's tensor inputs (certain: the callee's annotation or the caller's making) that the caller's last
    statement to run an op binds, in argument order (``cos, sin = ...`` then ``self.side(kv, cos, sin)``)."""
    before = [s for s in block[: block.index(site.stmt)] if runs_op(s)]
    if not before or before[-1] in site_stmts or not binds_a_call(before[-1]):
        return ()
    bound = bound_names(before[-1])
    return tuple(dict.fromkeys(a.name for a in site.args if a.bare and a.name in bound and _certain(a, made)))


def _follows(block: list[ast.stmt], earlier: ast.stmt, stmt: ast.stmt) -> bool:
    return earlier in block and stmt in block and block.index(stmt) == block.index(earlier) + 1


def _certain(argument: Argument, made: dict[ast.stmt, str]) -> bool:
    """The argument is a tensor: the callee says so, or the caller made it (the ``tensors.py`` rules)."""
    return argument.tensor is Tensorness.TENSOR or argument.name in made.values()
