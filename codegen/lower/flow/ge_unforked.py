"""GE: where a planned call needs no fork edge, and whether it then still comes after all the caller's work.

A fork orders the call's first op after the caller's prior work. None is needed where nothing the call needs
runs unordered before it: no op of the function runs before it (``ge_before.py``), it reads only what the
function was given (``ge_given.py``), what earlier calls on its stream made or only results of calls on other
streams (``ge_own.py``), the caller's last tensor itself (the read is the edge), or on every path what the
caller's last work made (``ge_reads.py``). The first of these, in that order, decides. A call decided by
``ge_given``/``ge_own`` does not come after all the caller's work, so no later call leans on it; nor may a call
that leads a chain (the next call shares its fork: ``ge_chain.leads_chain``) go without one on their word. Asked
last: the call and each call chained after it read only, name by name, what was given or what their stream made
(``ge_given_chain.py``: the DeepSeek-V4 MLA prolog's KV half), which frees the chain's leader too.
"""

from __future__ import annotations

import ast
from collections.abc import Set

import attrs

from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.ge_before import nothing_before
from codegen.lower.flow.ge_chain import bare_inputs, leads_chain
from codegen.lower.flow.ge_gather import binds_gathers
from codegen.lower.flow.ge_given import reads_only_given, state_untouched
from codegen.lower.flow.ge_given_chain import given_chain
from codegen.lower.flow.ge_last import binds_a_call, views_a_name
from codegen.lower.flow.ge_own import reads_own_stream, reads_results, same_guard
from codegen.lower.flow.ge_reads import Walk, ordered_by_reads
from codegen.lower.flow.object_state import ObjectState
from codegen.lower.flow.sites import Site

__all__ = ["GeCaller", "unforked"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.frozen(kw_only=True)
class GeCaller:
    """One caller, as GE's fork decisions read it (nothing here changes while its calls are planned)."""

    fn: _Function
    sites: list[Site]
    ordered: list[Site]  # the calls in source order
    blocks: dict[ast.stmt, list[ast.stmt]]  # each statement's block
    parents: dict[ast.stmt, ast.AST]  # each statement's compound statement (or the function)
    made: dict[ast.stmt, str]  # the statements that certainly bind a tensor, with its name
    receiver: str | None  # the caller's ``self``
    submodules: frozenset[str]  # its object's attributes that hold a submodule (``ge_layers.py``)
    indices: frozenset[str]  # the names that hold a tensor wherever read (``ge_returned.tensor_names``)
    objects: ObjectState | None = None  # its object's submodules and their groups, across the run's files
    site_stmts: set[ast.stmt] = attrs.field(init=False)  # the planned calls' statements

    @site_stmts.default
    def _site_stmts(self) -> set[ast.stmt]:
        return {s.stmt for s in self.sites}


def unforked(caller: GeCaller, site: Site, dependency: str | None, after_all: Set[ast.stmt]) -> bool | None:
    """None where the call needs a fork; else whether it comes after all the caller's work before it
    (``dependency``: the tensor the caller made last; ``after_all``: the earlier calls that do)."""
    leads = leads_chain(site, caller.ordered, caller.blocks)
    if not leads and reads_own_stream(site, caller.sites, caller.fn):
        return False  # it reads only what earlier calls on its stream made
    if nothing_before(site.stmt, caller.parents):
        return True  # no op of this function runs before it: the graph's data orders the rest
    if not leads and _given(caller, site):
        return False  # it reads only what the function was given
    if dependency is not None and dependency in bare_inputs(site):
        return True  # the call reads the caller's last tensor: that read is the edge
    if ordered_by_reads(site.stmt, _reads(site), _walk(caller, site, after_all)):
        return True  # on every path, the caller's last work made what it reads
    if not leads and reads_results(site, caller.sites, caller.fn) and _untouched(caller, site):
        return False  # it reads only what calls on other streams made
    if given_chain(caller, site):
        return False  # it, and the calls chained after it, read only what was given or what their stream made
    return None


def _reads(site: Site) -> frozenset[str]:
    """What the call's arguments read (an expression argument is computed on the call's stream)."""
    return frozenset().union(*({a.name} if a.bare and a.name else data_reads(a.node) for a in site.args))


def _given(caller: GeCaller, site: Site) -> bool:
    func = site.call.call.func  # a bare name is the stream function itself, no data of the caller's stream
    reads = _reads(site) | (frozenset() if isinstance(func, ast.Name) else data_reads(func))
    return reads_only_given(reads, caller.fn, caller.receiver) and _untouched(caller, site)


def _untouched(caller: GeCaller, site: Site) -> bool:
    return state_untouched(site, caller.sites, caller.fn, caller.receiver, caller.submodules)


def _walk(caller: GeCaller, site: Site, after_all: Set[ast.stmt]) -> Walk:
    """The walk back from ``site``: a read orders it after a call's result or a gather by a tensor of ``indices``
    (``ge_gather.py``; not after a planned call that does not come after all the caller's work before it)."""
    sites = caller.sites
    same = {s.stmt for s in sites if s.stmt in after_all and s.tag == site.tag and same_guard(s, site)}
    unordered = {s.stmt for s in sites if s.guard.hoist is None and s.stmt not in after_all}
    elsewhere = {s.stmt for s in sites if same_guard(s, site)} - same  # no work of the caller's stream
    return Walk(
        parents=caller.parents,
        same_stream=same.__contains__,
        makes=lambda s: (
            s not in unordered and not views_a_name(s) and (binds_a_call(s) or binds_gathers(s, caller.indices))
        ),
        elsewhere=elsewhere.__contains__,
    )
