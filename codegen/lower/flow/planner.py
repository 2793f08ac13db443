"""The sync planner: for every function that calls stream functions, where its dataflow joins each call.

Each planned call (:mod:`codegen.lower.flow.sites`) runs on its stream at the call site; the caller joins
just before the first statement that reads the result, on the paths where the call forked (a flag set
at the call says so where only some paths did), and a result handed whole to a call on another side
stream is waited for by that stream directly (:mod:`codegen.lower.flow.wraps` decides the rest). Every wait
reads the same guard value as the fork: the guard as spelled at the call, or a flag read once at the
call when the caller may change what the guard reads in between.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import Any

import attrs

from codegen.lower.flow import early, hoist, loop_events, split
from codegen.lower.flow.analyze import Analysis, analyze
from codegen.lower.flow.assumed import under_guards
from codegen.lower.flow.at_once import joined_at_once
from codegen.lower.flow.binding_aliases import binding_groups
from codegen.lower.flow.call_bound import call_bound
from codegen.lower.flow.caller_context import CallerContext
from codegen.lower.flow.caller_facts import Planned
from codegen.lower.flow.fresh_bindings import fresh_bindings
from codegen.lower.flow.guard_keys import guard_key, reached_keys, stable_key
from codegen.lower.flow.last_iteration import false_at_last
from codegen.lower.flow.one_block import guarded_body
from codegen.lower.flow.relations import CallRelations
from codegen.lower.flow.site_sync import site_sync
from codegen.lower.flow.site_views import site_view
from codegen.lower.flow.sites import Site
from codegen.lower.flow.stability import Stability, changed_objects
from codegen.lower.flow.transfer import SiteView
from codegen.lower.flow.wraps import lower_sites
from codegen.lower.plan import Anchor, CallerPlan

__all__ = ["Round", "apart_round", "hoisted_plan", "plan_caller"]


def plan_caller(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sites: list[Site],
    context: CallerContext,
    fixed: frozenset[ast.stmt] = frozenset(),
) -> CallerPlan:
    """The steps of one caller with planned ``sites`` (their ``index`` is their position in ``sites``); a call on a
    side stream may be issued in the block of the call before it on its stream (``hoist.py``), across no statement
    of ``fixed`` (the ``sync="manual"`` calls)."""
    stability = Stability(fn, changed=changed_objects(sites))
    found = apart_round(fn, sites, context, stability)
    if found is None:
        return CallerPlan(steps={})
    taken = set(context.flags.taken)
    plan = lower_sites(fn, _planned(fn, found, context, stability), context)
    apart = hoist.Apart(sites=found.sites, keys=found.keys, relations=found.relations)
    lowered = functools.partial(lower_sites, context=context)
    trial = functools.partial(_trial, sites=sites, context=context, taken=taken, plan_of=lowered)
    return hoist.hoisted(fn, apart, plan, trial, context.barriers | fixed | {s.stmt for s in sites})


def hoisted_plan(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sites: list[Site],
    context: CallerContext,
    plan_of: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], CallerPlan],
    fixed: frozenset[ast.stmt] = frozenset(),
) -> CallerPlan:
    """The plan ``plan_of`` makes of ``fn`` (GE's: ``ge.py``), with calls moved up where this planner's analysis
    says they may (``hoist.py``)."""
    plan = plan_of(fn)
    found = apart_round(fn, sites, context, Stability(fn, changed=changed_objects(sites)))
    if found is None:
        return plan
    apart = hoist.Apart(sites=found.sites, keys=found.keys, relations=found.relations)

    def made(moved: ast.FunctionDef | ast.AsyncFunctionDef, _: Planned) -> CallerPlan:
        return plan_of(moved)

    trial = functools.partial(_trial, sites=sites, context=context, taken=set(context.flags.taken), plan_of=made)
    return hoist.hoisted(fn, apart, plan, trial, context.barriers | fixed | {s.stmt for s in sites})


def _trial(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    *,
    sites: list[Site],
    context: CallerContext,
    taken: set[str],
    plan_of: Callable[[ast.FunctionDef | ast.AsyncFunctionDef, Planned], CallerPlan],
) -> hoist.Trial | None:
    """The round and plan of ``fn`` with some calls moved, its generated names as fresh as the first plan's."""
    stability = Stability(fn, changed=changed_objects(sites))
    found = apart_round(fn, sites, context, stability)
    if found is None:
        return None
    context.flags.taken = set(taken)
    planned = _planned(fn, found, context, stability)
    return hoist.Trial(sites=found.sites, steps=planned.result.steps, plan=plan_of(fn, planned))


def _planned(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, found: Round, context: CallerContext, stability: Stability
) -> Planned:
    """The decisions of the calls that run apart: the analysis under the guards, how each fork is read at its
    joins, the statements split before a wait, the caller as it runs where a call's guard holds."""
    key_of = functools.partial(stable_key, stability, context.aliases)
    rerun = functools.partial(
        _rerun,
        views=found.views,
        relations=found.relations,
        barriers=context.barriers,
        methods=context.methods,
        last=false_at_last(fn, context.receiver, context.sized),
    )
    result = under_guards(fn, found.result, found.sites, found.keys, key_of, context.returns, rerun)
    syncs = [site_sync(s, result, stability, context.flags, found.since) for s in found.sites]
    splits = {stmt: (context.flags.fresh(split.temp_name(first)), first) for stmt, first in result.splits.items()}
    narrowed = functools.partial(guarded_body, fn, found.keys, key_of, context.returns)
    return Planned(
        sites=found.sites,
        syncs=syncs,
        result=result,
        relations=found.relations,
        splits=splits,
        narrowed=narrowed,
        views=found.views,
        groups=found.groups,
    )


@attrs.frozen(kw_only=True)
class Round:
    """One analysis of the caller with the calls still planned."""

    sites: list[Site]
    since: int  # the line of the first call
    keys: list[str | None]
    relations: CallRelations
    views: dict[ast.stmt, SiteView]
    result: Analysis
    groups: dict[str, frozenset[str]]  # the names that may share memory (``binding_aliases.py``)


def apart_round(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, sites: list[Site], context: CallerContext, stability: Stability
) -> Round | None:
    """The analysis of the calls that run apart from the caller's stream (None: no call does). A call joined by
    the very next statement overlaps nothing: it stays on the caller's stream, as written, and the rest are
    analyzed again without it."""
    following = early.following(fn)
    groups = binding_groups(fn, context.results)
    dropped = dict(context.helper_writes)  # what the module's helpers write, then what calls left here write
    while True:
        found = _round(fn, sites, context, stability, (groups, dropped), following)
        at_once = [s for s in sites if joined_at_once(s, found.result, following)]
        if not at_once:
            return found
        dropped |= {s.stmt: s.writes | dropped.get(s.stmt, frozenset()) for s in at_once if s.writes}
        sites = [attrs.evolve(s, index=i) for i, s in enumerate(s for s in sites if s not in at_once)]
        if not sites:
            return None


def _round(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    sites: list[Site],
    context: CallerContext,
    stability: Stability,
    aliasing: tuple[dict[str, frozenset[str]], dict[ast.stmt, frozenset[str]]],
    following: dict[ast.stmt, Anchor],
) -> Round:
    """One analysis; ``aliasing``: the names that may share memory (``binding_aliases.py``), and what the calls
    left on the caller's stream so far write."""
    groups, dropped = aliasing
    since = min((s.stmt.lineno for s in sites), default=0)
    keys = [guard_key(s, stability, since, context.aliases, context.uniform) for s in sites]
    reached = reached_keys(sites, keys, fn, stability, since, context.aliases)
    bound = call_bound(fn, [(s.index, s.stmt) for s in sites])
    relations = CallRelations(sites, keys, reached, dropped, made_only_by=bound, state_writer=context.state_writes)
    relations.fresh = fresh_bindings(fn, context.results)
    views = {s.stmt: site_view(s, relations.keys[s.index], context, groups) for s in sites}
    result = loop_events.analyzed(
        fn, sites, views, relations, context, following, false_at_last(fn, context.receiver, context.sized)
    )
    return Round(sites=sites, since=since, keys=keys, relations=relations, views=views, result=result, groups=groups)


def _rerun(fn: ast.FunctionDef | ast.AsyncFunctionDef, **context: Any) -> Analysis:
    views, relations = context["views"], context["relations"]
    result = analyze(fn, views, relations, context["barriers"], context["methods"], last=context["last"])
    return loop_events.trimmed(relations, result)
