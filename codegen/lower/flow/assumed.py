"""The state each guarded call starts in on the paths where its guard holds: the only paths where it forks.

The analysis (``analyze.py``) merges every path, those where a guard is off included: after ``if
self.multistream: q, s = self.quant(h, True)`` the quantization forked on some paths only, and after ``if q is
None: q, s = quant(h)`` the name ``q`` may hold the caller's result. A call guarded by ``self.multistream``
runs on its stream only where the flag holds, and there the quantization forked and ``q`` holds its result
(``guard_paths.py``): the state it starts in, read by whether it forks and what it keeps alive, is the one the
analysis of those paths gives. Where its statement is on no such path, or no branch is left out, the merged
state stays.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.guard_paths import Assumed, pruned
from codegen.lower.flow.sites import Site
from codegen.lower.flow.tensors import Returns

__all__ = ["under_guards"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def under_guards(
    fn: _Function,
    result: Analysis,
    sites: list[Site],
    keys: list[str | None],
    key_of: Callable[[str, int], str | None],
    returns: Returns,
    analysis: Callable[[_Function], Analysis],
) -> Analysis:
    """``result`` with each call guarded by a stable key (``keys``, by site) starting in the state that
    ``analysis`` gives ``fn`` where that key holds."""
    if any(getattr(s.callee, "flips_guard", False) for s in sites):
        return result  # a call changes what a guard reads: an ``if`` before it may have read another value
    states = dict(result.states)
    for key in dict.fromkeys(k for k in keys if k is not None and not k.startswith("<call")):
        narrowed = pruned(fn, Assumed(key=key, key_of=key_of, returns=returns))
        if narrowed is None:
            continue
        found = analysis(narrowed).states
        states.update({s.stmt: found[s.stmt] for s, k in zip(sites, keys) if k == key and s.stmt in found})
    return attrs.evolve(result, states=states)
