"""Whether the stream that made an input allocates nothing while the call's stream may still read it.

An input needs no ``record_stream`` when its memory cannot go to a new allocation before the caller joins the
call's stream: an earlier call made it on another side stream that issues nothing more before that join
(:func:`maker_idle`) or whose next call waits for this one first (:func:`maker_waits`), or the caller made it
and runs no op from the call to the join (:func:`quiet_until`). The join may be that of a later call on the
call's stream, which covers it (:func:`surely_joined_at`), as for ``keep_alive``'s reads after the join.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.lower.flow.aliasing import aliasing
from codegen.lower.flow.caller_facts import CallerFacts
from codegen.lower.flow.exprs import bound_names, leaves, runs_op
from codegen.lower.flow.sites import Site
from codegen.lower.flow.state import pending
from codegen.lower.flow.transfer import Join, Relay

__all__ = ["maker_idle", "maker_waits", "quiet_until", "surely_joined_at"]


def surely_joined_at(facts: CallerFacts, site: Site) -> ast.stmt | None:
    """The first statement of ``site``'s block after it before which the caller always joins its stream: a join
    of the call, or of a later call of the block (not nested) on its stream that forks wherever it did
    (``relations.covers``): that call forked after it on every path reaching the join, so its join covers the
    call's work too (the stream runs it first)."""
    block = facts.block(site.stmt)
    after = block[block.index(site.stmt) + 1 :]
    joined = _joined_before(facts)
    covering = {site.index}
    for stmt in after:
        if covering & joined.get(stmt, set()):
            return stmt
        covering |= {o.index for o in facts.sites if o.stmt is stmt and _covers(facts, site, o)}
    return None


def _joined_before(facts: CallerFacts) -> dict[ast.AST, set[int]]:
    """The calls joined before each statement."""
    joined: dict[ast.AST, set[int]] = {}
    for (kind, stmt, _), found in facts.result.steps.items():
        if kind == "before":
            joined.setdefault(stmt, set()).update(s.site for s in found if isinstance(s, Join))
    return joined


def _covers(facts: CallerFacts, site: Site, other: Site) -> bool:
    return other.tag == site.tag and facts.relations.covers(site.index, other.index)


def maker_idle(facts: CallerFacts, site: Site, name: str, join: ast.stmt, applied: Mapping[ast.stmt, str]) -> bool:
    """``name`` holds what an earlier call of the block made on another side stream M, and M issues nothing
    more before the caller joins the call's stream (before ``join``): no later call on M, and only
    stream-free code (``free``) until then. M's memory then goes to no allocation while the call reads it
    (``applied``: the statements whose first operand runs before their wait)."""
    maker = _maker(facts, site, name)
    if maker is None or facts.free is None or join in applied:
        return False
    block = facts.block(site.stmt)
    run = block[block.index(site.stmt) : block.index(join)]
    later = any(o.tag == maker.tag and _after(o, site) for o in facts.sites)
    return not later and all(facts.free(s) and not leaves(s) for s in run)


def maker_waits(facts: CallerFacts, site: Site, name: str) -> bool:
    """``name`` holds what an earlier call of the block made on another side stream M, and M's next call (all
    of M's later calls are in this block) first waits for this call's stream at this call or after it (a
    relay): M allocates nothing before the read is done (omni-infer's top-k packed on one stream, gathered
    on another, unpacked on the first once the gathers are done)."""
    maker = _maker(facts, site, name)
    block = facts.block(site.stmt)
    later = [o for o in facts.sites if maker is not None and o.tag == maker.tag and _after(o, site)]
    if not later or any(o.stmt not in block for o in later):
        return False
    first = min(later, key=lambda o: (block.index(o.stmt), o.index))
    relays = [s for found in facts.result.steps.values() for s in found if isinstance(s, Relay) and s.to == first.index]
    return any(not r.may and _from_here_on(facts, facts.sites[r.site], site) for r in relays)


def _after(other: Site, site: Site) -> bool:
    return (other.stmt.lineno, other.index) > (site.stmt.lineno, site.index)


def _from_here_on(facts: CallerFacts, other: Site, site: Site) -> bool:
    """``other`` is ``site``, or a later call of its block on its stream (its join covers ``site``'s work)."""
    block = facts.block(site.stmt)
    if other is site:
        return True
    return other.tag == site.tag and other.stmt in block and block.index(other.stmt) > block.index(site.stmt)


def quiet_until(facts: CallerFacts, site: Site, join: ast.stmt, applied: Mapping[ast.stmt, str]) -> bool:
    """The caller's stream runs no op from the call to its join before ``join`` (calls of other stream
    functions with plain arguments run on their own streams; a statement that only takes views, ``v =
    x.view(2, 3)``, runs no kernel: ``aliasing.py``): nothing it made can go to a new allocation while the
    call reads it."""
    if join in applied:
        return False  # its first operand runs before the wait
    block = facts.block(site.stmt)
    run = block[block.index(site.stmt) + 1 : block.index(join)]
    planned = {other.stmt: other for other in facts.sites}
    return not any(leaves(s) or _allocates(facts, s, planned.get(s)) for s in run)


def _allocates(facts: CallerFacts, stmt: ast.stmt, other: Site | None) -> bool:
    return runs_op(stmt) and aliasing(stmt) is None and not _runs_aside(facts, other)


def _runs_aside(facts: CallerFacts, other: Site | None) -> bool:
    return other is not None and not facts.syncs[other.index].hoisted


def _maker(facts: CallerFacts, site: Site, name: str) -> Site | None:
    """The earlier call of ``site``'s block, on another stream under the same guard, whose result ``name``
    surely holds (nothing binds it in between); None if there is none, the call is in a loop, or it only writes
    ``name`` in place (its memory is the caller's, which the caller's stream may reuse)."""
    block = facts.block(site.stmt)
    found = [facts.sites[p.site] for p in pending(facts.result.states.get(site.stmt, ())) if name in p.names]
    if len(found) != 1 or site.stmt in facts.looped:
        return None
    maker = found[0]
    if name in maker.writes:  # a name it only writes in place holds the caller's memory, not its stream's
        return None
    if maker.tag == site.tag or maker.stmt not in block or block.index(maker.stmt) >= block.index(site.stmt):
        return None
    same_guard = facts.same_guard(facts.syncs[maker.index].guard_text, facts.syncs[site.index].guard_text)
    if not same_guard or facts.syncs[maker.index].flag or facts.syncs[site.index].flag:
        return None
    between = block[block.index(maker.stmt) + 1 : block.index(site.stmt)]
    return None if any(name in bound_names(s) for s in between) else maker
