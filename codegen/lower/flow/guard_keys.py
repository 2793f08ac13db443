"""The keys by which the planner compares two calls' guards: two calls with one key fork on the same paths.

A guard's key is its dotted name where nothing may change it from the first call on (``stability.py``), read
through the guard aliases (``guard_alias.py``); a guard that may change, or is hoisted, gets a key of its own
(``<call i>``); an unguarded call none. An unguarded call in the body of an ``if`` whose test is a stable dotted
name forks only where that test held: it takes the test's key (``reached_keys``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from codegen.index import scan
from codegen.index.walked import walked_of
from codegen.lower.flow.sites import Site
from codegen.lower.flow.stability import Stability

__all__ = ["guard_key", "reached_keys", "stable_key"]


def guard_key(
    site: Site, stability: Stability, since: int, aliases: dict[str, str], uniform: Mapping[str, str] = {}
) -> str | None:
    """Two sites with the same key fork on the same paths; None: the site always forks. ``aliases``: guards
    spelled otherwise that hold the same value (``guard_alias.py``); ``uniform``: guards read through a layer
    loop's target that every layer holds equal (``uniform_guards.py``)."""
    guard = site.guard
    if guard.static:
        return None
    held = uniform.get(guard.expr or "") if guard.hoist is None else None
    if held is not None and stability.unchanged(guard.expr or "", since):
        return held
    if guard.hoist is not None or guard.expr is None or not stability.stable(guard.expr, since):
        return f"<call {site.index}>"
    return aliases.get(guard.expr, guard.expr)


def reached_keys(
    sites: list[Site],
    keys: list[str | None],
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    stability: Stability,
    since: int,
    aliases: dict[str, str],
) -> dict[int, str]:
    """For a call that always forks, in the body of an ``if`` whose test is a stable dotted name (``if
    self.multistream: x = self.quant(h, True)``): that test's key. It forked only where the test held, so a call
    whose guard has that key forks wherever it did."""
    if all(k is None for k in keys) or all(k is not None for k in keys):
        return {}
    parents = {child: node for node in walked_of(fn, ast.If) for child in node.body}
    found: dict[int, str] = {}
    for site, key in zip(sites, keys):
        test = parents[site.stmt].test if key is None and site.stmt in parents else None
        text = scan.dotted_name(test) if test is not None else None
        if text is not None and stability.stable(text, since):
            found[site.index] = aliases.get(text, text)
    return found


def stable_key(stability: Stability, aliases: dict[str, str], dotted: str, line: int) -> str | None:
    """The key of an ``if`` test that reads ``dotted`` at ``line`` (None: the caller may change it from there)."""
    return aliases.get(dotted, dotted) if stability.stable(dotted, line) else None
