"""GE: a chain of calls on one stream that reads only what its function was given, or what its stream made, needs no
fork edge.

``ge_given.py`` frees a call of its fork edge when it reads only what the function was given, and ``ge_own.py`` when
it reads only what earlier calls on its stream made; neither frees a call that leads a chain (the next call shares
its fork and may need it), nor a call reading some of each. Both reasons hold name by name: a given value comes from
outside the function and GE orders it after its producer by its data; a value only earlier calls on the stream bind
was made on that stream, before it in program order. So a call needs no edge where each name it reads is one or the
other, and a call leading a chain none where that holds for it and every call chained after it, and where no other
work of the function changes the object's state their bodies read or write (``ge_given.state_untouched``, or read
with the object's submodules and their groups across the run's files, ``object_state.py``: ``self.q_norm(x)``
changes only ``q_norm`` where a base class in another file assigns it one).
vllm-ascend's DeepSeek-V4 MLA prolog quantizes, projects and scatters the KV half from ``hidden_states``, ``cos``,
``sin``, the window cache and ``slot_mapping`` it was given, each step reading the one before: one switch, no edge.
Like the calls decided by those two rules, such a call does not come after all the caller's work, so no later call
leans on it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.index.walked import walked_of
from codegen.lower.flow.exprs import data_reads
from codegen.lower.flow.ge_chain import leads_chain
from codegen.lower.flow.ge_given import reads_only_given, state_untouched
from codegen.lower.flow.ge_own import own_made
from codegen.lower.flow.sites import Site

if TYPE_CHECKING:
    from codegen.lower.flow.ge_unforked import GeCaller

__all__ = ["given_chain"]


def given_chain(caller: GeCaller, site: Site) -> bool:
    """``site`` and each call chained after it read only what the function was given or what earlier calls on their
    stream made, and nothing else the function runs changes the object's state their bodies touch."""
    return all(_given_or_own(caller, s) for s in _chain_from(site, caller.ordered, caller.blocks))


def _chain_from(site: Site, ordered: list[Site], blocks: dict[ast.stmt, list[ast.stmt]]) -> list[Site]:
    """``site`` and the calls that share its fork, one right after another."""
    chain = [site]
    while leads_chain(chain[-1], ordered, blocks):
        chain.append(ordered[ordered.index(chain[-1]) + 1])
    return chain


def _given_or_own(caller: GeCaller, site: Site) -> bool:
    """Each name the call reads is given, or passed whole and bound only by calls on its stream under its guard."""
    own = {a.name for a in site.args if a.bare and a.name and own_made(a.name, site, caller.sites, caller.fn)}
    reads = _reads(site)
    outside = frozenset(reads - own)
    given = not outside or reads_only_given(outside, caller.fn, caller.receiver)
    return bool(reads) and given and _untouched(caller, site)


def _untouched(caller: GeCaller, site: Site) -> bool:
    """No other work of the function changes the object's state the call's body reads or writes, nor reads what it
    writes: ``ge_given``'s reading, or the same question on the groups of ``object_state.py``."""
    if state_untouched(site, caller.sites, caller.fn, caller.receiver, caller.submodules):
        return True
    objects = caller.objects
    if objects is None:
        return False
    body = objects.touched(site.callee.reads_state | site.callee.writes_state)  # type: ignore[attr-defined]
    writes = objects.touched(site.callee.writes_state)  # type: ignore[attr-defined]
    planned = {id(s.call.call): s for s in caller.sites}
    for call in (n for n in walked_of(caller.fn, ast.Call) if n is not site.call.call):
        other = planned.get(id(call))
        if other is not None and other.tag == site.tag:
            continue  # the same stream: in program order
        changes = objects.touched(other.callee.writes_state) if other else objects.changes(call)  # type: ignore[attr-defined]
        reads = objects.touched(other.callee.reads_state) if other else changes  # type: ignore[attr-defined]
        if _meet(changes, body) or _meet(reads, writes):
            return False
    return True


def _meet(a: frozenset[str], b: frozenset[str]) -> bool:
    return bool(a and b) and ("*" in a or "*" in b or bool(a & b))


def _reads(site: Site) -> set[str]:
    """What the call and its arguments read (an expression argument is computed from the caller's values)."""
    func = site.call.call.func  # a bare name is the stream function itself, no data of the caller's stream
    found = set() if isinstance(func, ast.Name) else data_reads(func)
    for argument in site.args:
        found |= {argument.name} if argument.bare and argument.name else data_reads(argument.node)
    return found
