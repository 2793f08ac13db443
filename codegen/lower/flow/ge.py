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
work made what it reads (``ge_reads.py``). Calls decided by the middle two do not come after all the caller's
work, so no later call leans on them; nor do calls that read only results of calls on other streams
(``ge_own.py``). The walk back passes planned calls switched whenever this one is (they are no work of the
caller's stream).
"""

from __future__ import annotations

import ast

from codegen.frontend.signature import Tensorness
from codegen.lower.flow.arguments import Argument
from codegen.lower.flow.exprs import bound_names, data_reads, runs_op
from codegen.lower.flow.ge_before import nothing_before
from codegen.lower.flow.ge_chain import bare_inputs, chain_glue, chain_made, leads_chain, ordered_by_chain
from codegen.lower.flow.ge_gather import binds_gathers
from codegen.lower.flow.ge_given import reads_only_given, state_untouched
from codegen.lower.flow.ge_last import binds_a_call, last_tensor, tensor_above
from codegen.lower.flow.ge_own import reads_own_stream, reads_results, same_guard
from codegen.lower.flow.ge_reads import Walk, ordered_by_reads
from codegen.lower.flow.ge_returned import tensor_names
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
) -> CallerPlan:
    """The GE plan of one caller (see above); ``submodules``: its object's attributes that hold one
    (``ge_layers.py``)."""
    blocks = statement_blocks(fn)
    made = certain_tensors(fn, method=method, returns=returns)
    site_stmts = {s.stmt for s in sites}
    steps: dict[Anchor, tuple[Step, ...]] = {}
    wraps: dict[ast.stmt, Wrap] = {}
    previous: tuple[ast.stmt, str | None, str] | None = None  # the last wrap: statement, guard, its fork's token
    chain: list[Site] = []  # the calls just before this one, one right after another, under one guard
    parents = {stmt: parent for parent in ast.walk(fn) for stmt in _children(parent)}
    receiver = fn.args.args[0].arg if method and fn.args.args else None
    after_all: set[ast.stmt] = set()  # the calls that come after all the caller's work before them
    indices = tensor_names(fn, method=method, returns=returns)
    ordered = sorted(sites, key=lambda s: (s.stmt.lineno, s.stmt.col_offset))
    for site in ordered:  # in source order
        if site.guard.hoist is not None:
            continue  # a guard read from an argument expression: the call stays on the caller's stream
        when = Cond.of(site.guard.expr) if site.guard.dynamic else None
        block = blocks.get(site.stmt, [])
        glue = (
            chain_glue(block, chain[-1].stmt, site.stmt, chain_made(chain))
            if chain and same_guard(chain[-1], site)
            else None
        )
        chain = [*chain, site] if glue is not None else [site]
        for stmt in glue or ():  # views of the chain's results between two of its calls: in their block
            wraps[stmt] = Wrap(switch=SwitchStream(tag=site.tag, priority=site.callee.priority, when=when))  # type: ignore[attr-defined]
        tensor = next((a.name for a in site.args if a.bare and a.name and _certain(a, made)), None)
        dependency = last_tensor(block, site.stmt, site_stmts, made) or tensor_above(
            site.stmt, blocks, parents, site_stmts, made
        )
        enter: tuple[ForkWait | ForkToken, ...]
        follows_all = True  # whether it comes after all the caller's work before it (what a fork does)
        if ordered_by_chain(site, [e for e in chain[:-1] if e.stmt in after_all]):
            enter = ()  # its stream, or a result it reads, already comes after the fork of an earlier call
        elif not leads_chain(site, ordered, blocks) and reads_own_stream(site, sites, fn):
            enter, previous, follows_all = (), None, False  # it reads only what earlier calls on its stream made
        elif nothing_before(site.stmt, parents):
            enter, previous = (), None  # no op of this function runs before it: the graph's data orders the rest
        elif not leads_chain(site, ordered, blocks) and _given(site, sites, fn, receiver, submodules):
            enter, previous, follows_all = (), None, False  # it reads only what the function was given
        elif dependency is not None and dependency in bare_inputs(site):
            enter, previous = (), None  # the call reads the caller's last tensor: that read is the edge
        elif ordered_by_reads(site.stmt, _reads(site), _walk(site, sites, after_all, parents, indices)):
            enter, previous = (), None  # on every path, the caller's last work made what it reads
        elif not leads_chain(site, ordered, blocks) and _results(site, sites, fn, receiver, submodules):
            enter, previous, follows_all = (), None, False  # it reads only what calls on other streams made
        elif tensor is not None and dependency is not None and dependency != tensor:
            enter, previous = (ForkWait(tensor=tensor, dependency=dependency, when=when),), None
        elif dependency is not None and dependency not in bare_inputs(site):  # wait for the caller's tensor itself
            enter, previous = (ForkToken(name=dependency, wait=True, when=when),), None
        elif made_last := _made_last(site, block, site_stmts, made):  # wait for the producers of what it reads
            enter, previous = (ForkToken(name=made_last[0], wait=True, when=when, also=made_last[1:]),), None
        elif previous is not None and _follows(block, previous[0], site.stmt) and previous[1] == site.guard.expr:
            enter = (ForkToken(name=previous[2], wait=True, when=when),)
        else:
            token = flags.fresh("fork_token")  # type: ignore[attr-defined]
            steps[("before", site.stmt, "")] = (ForkToken(name=token, wait=False, when=when),)
            enter, previous = (ForkToken(name=token, wait=True, when=when),), (site.stmt, site.guard.expr, token)
        if follows_all:
            after_all.add(site.stmt)
        if previous is not None:
            previous = (site.stmt, previous[1], previous[2])
        priority = site.callee.priority  # type: ignore[attr-defined]
        wraps[site.stmt] = Wrap(switch=SwitchStream(tag=site.tag, priority=priority, when=when), enter=enter)
    return CallerPlan(steps=steps, wraps=wraps)


def _reads(site: Site) -> frozenset[str]:
    """What the call's arguments read (an expression argument is computed on the call's stream)."""
    return frozenset().union(*({a.name} if a.bare and a.name else data_reads(a.node) for a in site.args))


def _given(site: Site, sites: list[Site], fn: _Function, receiver: str | None, submodules: frozenset[str]) -> bool:
    func = site.call.call.func  # a bare name is the stream function itself, no data of the caller's stream
    reads = _reads(site) | (frozenset() if isinstance(func, ast.Name) else data_reads(func))
    return reads_only_given(reads, fn, receiver) and state_untouched(site, sites, fn, receiver, submodules)


def _results(site: Site, sites: list[Site], fn: _Function, receiver: str | None, submodules: frozenset[str]) -> bool:
    return reads_results(site, sites, fn) and state_untouched(site, sites, fn, receiver, submodules)


def _walk(site: Site, sites: list[Site], after_all: set[ast.stmt], parents: dict, indices: frozenset[str]) -> Walk:
    """The walk back from ``site``: a read orders it after a call's result or a gather by a tensor of ``indices``
    (``ge_gather.py``; not after a planned call that does not come after all the caller's work before it)."""
    same = {s.stmt for s in sites if s.stmt in after_all and s.tag == site.tag and same_guard(s, site)}
    unordered = {s.stmt for s in sites if s.guard.hoist is None and s.stmt not in after_all}
    elsewhere = {s.stmt for s in sites if same_guard(s, site)} - same  # no work of the caller's stream
    return Walk(
        parents=parents,
        same_stream=same.__contains__,
        makes=lambda s: s not in unordered and (binds_a_call(s) or binds_gathers(s, indices)),
        elsewhere=elsewhere.__contains__,
    )


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
