"""What a function of the run writes of its parameters, read once per run rather than once per call of it.

``param_writes.py`` reads a called function's body, and the bodies it calls in turn, for every call: a helper that
fifty statements call was read fifty times, the modules it reaches resolved each time. The answer does not depend
on the call, only on what the reading met on its way: a function already being followed (a cycle) reads as
writing nothing, and a call deeper than the limit as writing every argument. So a reading is kept, on its module's
``ModuleFunctions`` (one per module and run index), with the functions it met and how deep it went; it is given
again to a call whose followed functions include none of those and that has the depth to spare, where reading
again would take exactly the same steps. A reading that met a function already followed before it began, or that
stopped at the depth limit, depended on where it was asked from, and is not kept.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

import attrs

from codegen.lower.flow.imported_writes import ModuleFunctions

__all__ = ["Reading", "Trace", "known_writes"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@attrs.define
class Trace:
    """What one reading met: the functions its calls ran (followed or not), the most functions followed at once at
    any of its calls, and whether a call was past the depth limit."""

    met: set[_Function] = attrs.field(factory=set)
    deepest: int = 0
    cut: bool = False

    def followed(self, fn: _Function, seen: frozenset) -> bool:
        """``fn`` is being followed already (it reads as writing nothing here); met either way."""
        self.met.add(fn)
        return fn in seen

    def too_deep(self, seen: frozenset, limit: int) -> bool:
        """A call with ``seen`` followed is past the limit (it may write every argument)."""
        self.deepest = max(self.deepest, len(seen))
        self.cut = self.cut or len(seen) >= limit
        return len(seen) >= limit

    def add(self, inner: Trace) -> None:
        self.met |= inner.met
        self.deepest = max(self.deepest, inner.deepest)
        self.cut = self.cut or inner.cut


@attrs.frozen(eq=False)
class Reading:
    """A kept reading: its answer, the functions it met, and how much deeper than where it began it went."""

    written: tuple[str, ...]
    met: frozenset[_Function]
    depth: int

    def holds(self, seen: frozenset, limit: int) -> bool:
        return self.met.isdisjoint(seen) and len(seen) + self.depth < limit


def known_writes(
    functions: Mapping[str, _Function],
    fn: _Function,
    owner: str | None,
    seen: frozenset,
    limit: int,
    trace: Trace,
    read: Callable[[Trace], tuple[str, ...]],
) -> tuple[str, ...]:
    """The parameters ``fn`` (of the module whose functions are ``functions``, a method of ``owner``) writes,
    called with ``seen`` followed: kept from an earlier reading where it holds, else ``read`` (then kept where it
    may be); ``trace`` learns what either met."""
    kept = functions.known_writes if isinstance(functions, ModuleFunctions) else None
    found = kept.get((fn, owner)) if kept is not None else None
    if found is not None and found.holds(seen, limit):
        trace.add(Trace(met=set(found.met), deepest=len(seen) + found.depth))
        return found.written
    inner = Trace()
    written = read(inner)
    if kept is not None and not inner.cut and inner.met.isdisjoint(seen):
        kept[(fn, owner)] = Reading(written, frozenset(inner.met), max(inner.deepest - len(seen), 0))
    trace.add(inner)
    return written
