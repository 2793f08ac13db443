"""Which locals of a function may hold its object's state: an attribute, an item of it, a view of either.

``cache = self.cache; cache[k] = t`` stores into the object's dict, ``v = self.buf[0]; v.add_(1)`` writes its
buffer, as ``self.cache[k] = t`` and ``self.buf[0].add_(1)`` do: a write through such a local changes the
attribute it came from. A local holds an attribute when a binding or a store into it (``view_roots.flows``)
takes a chain of views rooted at the object (``self.buf.view(-1)``, ``self.cache``), or a local that holds one,
one step after another; the object itself bound to a local holds every attribute (``"*"``); what a method of the
object or of an attribute hands out holds that attribute (``sd = self.sub.state_dict()``: ``handed_state.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING

from codegen.lower.flow.handed_state import handed_state
from codegen.lower.flow.view_roots import alias_root, reads_attribute, spread, view_base

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["first_attribute", "holding_locals", "state_locals"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef
_Held = Callable[[ast.expr, str, dict[str, frozenset[str]]], frozenset[str]]  # part, receiver, found so far


def state_locals(fn: _Function, receiver: str, scope: Scope | None = None) -> dict[str, frozenset[str]]:
    """Each local of ``fn`` that may hold state of ``receiver``, with the attributes (``"*"``: any)."""
    return holding_locals(fn, receiver, _held, scope, first=True)


def holding_locals(
    fn: _Function,
    receiver: str,
    held: _Held,
    scope: Scope | None = None,
    seeds: dict[str, frozenset[str]] | None = None,
    *,
    first: bool = False,
) -> dict[str, frozenset[str]]:
    """Each local of ``fn`` that may hold state of ``receiver``, named as ``held`` names what a bound value holds:
    seeded with what methods of the object hand out (``handed_state.py``; ``first``: by their first attribute;
    ``seeds``, named so too: what its methods of the run return, ``returned_state_locals.py``) and spread through
    views and aliases."""
    seed = handed_state(fn, receiver, scope)
    seed.update((name, seed.get(name, frozenset()) | more) for name, more in (seeds or {}).items())
    if first:
        seed = {name: frozenset(p.split(".")[0] for p in paths) for name, paths in seed.items()}
    found = spread(fn, seed, lambda part, so_far: held(part, receiver, so_far))
    found.pop(receiver, None)  # the object itself holds every attribute (``held`` never reads its entry)
    return found


def _held(part: ast.expr, receiver: str, found: dict[str, frozenset[str]]) -> frozenset[str]:
    root = alias_root(part)
    if root == receiver:
        return frozenset({first_attribute(part, receiver) or "*"})
    return found.get(root, frozenset()) if root else frozenset()


def first_attribute(node: ast.expr, receiver: str) -> str | None:
    """The attribute of ``receiver`` a chain of views starts with (``buf`` of ``self.buf.view(-1)[0]``)."""
    chain: list[str] = []
    while (below := view_base(node)) is not None:
        if isinstance(node, ast.Attribute):
            chain.append(node.attr)
        elif reads_attribute(node):  # ``getattr(self, name)``: the attribute named, any (``*``) if computed
            name = node.args[1]  # type: ignore[attr-defined]
            chain.append(name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*")
        node = below
    return chain[-1] if chain and isinstance(node, ast.Name) and node.id == receiver else None
