"""Which resolved stream calls of a module are planned at all, grouped by the function that makes them.

A call of a function on the default stream, or of one compiled apart (a graph break), is never planned. A call
whose result a plain statement binds or drops is planned by its caller. A manual call nested in a larger
statement is planned only where the calls nested in that statement are every call it makes, on one stream: the
statement then runs whole on that stream (no join to place inside it, so nothing needs binding).
"""

from __future__ import annotations

from collections.abc import Iterable

from codegen.lower.flow.callsites import CallSite
from codegen.lower.flow.own_calls import own_calls

__all__ = ["by_caller"]


def by_caller(found: Iterable[CallSite], index: object) -> dict[str, list[CallSite]]:
    """The planned calls of ``found``, by the qualname of their caller, in order."""
    grouped: dict[str, list[CallSite]] = {}
    nested: dict[int, list[CallSite]] = {}
    for site in found:
        callee = index.callees[site.key]  # type: ignore[attr-defined]
        if callee.tag == "default" or callee.compiled_apart:
            continue
        if site.bindable:
            grouped.setdefault(site.caller, []).append(site)
        elif not callee.auto and site.stmt is not None:
            nested.setdefault(id(site.stmt), []).append(site)
    for sites in nested.values():
        if _whole_statement(sites, index):
            grouped.setdefault(sites[0].caller, []).extend(sites)
    return grouped


def _whole_statement(sites: list[CallSite], index: object) -> bool:
    """Manual calls nested in one simple statement (``return self.b(x, self.a(x))``) that are every call the
    statement makes, on one stream."""
    stmt = sites[0].stmt
    assert stmt is not None
    callees = [index.callees[s.key] for s in sites]  # type: ignore[attr-defined]
    return (
        not hasattr(stmt, "body")
        and len(own_calls(stmt)) == len(sites)
        and len({(c.tag, c.when) for c in callees}) == 1
    )
