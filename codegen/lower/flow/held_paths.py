"""Which locals of a caller hold its object's state, named by the whole path they hold: ``a.d`` of ``d = self.a.d``.

``state_views.state_locals`` names what a local holds by its first attribute (``a`` of ``d = self.a.d``), which is
what the callee bodies' reads are named by. A statement of the caller writing through such a local (``d.buf.add_(1)``,
``d.prepare(h)``, ``d[0] = t``) was then a write of all of ``self.a``: a side call pending with ``self.a.e.buf`` (a
sibling, read whole since ``read_paths.py``) was joined before it, where the same write spelled out
(``self.a.d.buf.add_(1)``) was not. The caller's writes (``state_writes.StateWrites``) read a local by the path it
holds, taken as ``changed_objects.object_path`` takes an object's (attributes down from the receiver, an item or a
view standing for what it is taken of), rerooted through the locals it was taken from (``o = self.a; d = o.d``:
``a.d``); a path through ``getattr`` with a computed name stops above it; what a method of the object or of an
attribute hands out holds that attribute (``sd = self.sub.state_dict()``: ``handed_state.py``). ``"*"``: the object
itself.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codegen.lower.flow.changed_objects import object_path
from codegen.lower.flow.state_views import holding_locals
from codegen.lower.flow.view_roots import alias_root

if TYPE_CHECKING:
    from codegen.lower.flow.call_state_writes import Scope

__all__ = ["held_paths"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


def held_paths(
    fn: _Function, receiver: str, scope: Scope | None = None, seeds: dict[str, frozenset[str]] | None = None
) -> dict[str, frozenset[str]]:
    """Each local of ``fn`` that may hold state of ``receiver``, with the attribute paths it holds (``"*"``: any;
    given ``scope``, also what a method of the run hands out of it: ``handed_results.py``); ``seeds``: locals known
    to hold paths besides (``returned_state_locals.py``)."""
    return holding_locals(fn, receiver, _held, scope, seeds)


def _held(part: ast.expr, receiver: str, found: dict[str, frozenset[str]]) -> frozenset[str]:
    path, root = object_path(part), alias_root(part)
    if path is None or root is None:
        return frozenset()
    rest = path[len(root) + 1 :]
    if root == receiver:
        return frozenset({_whole(rest)})
    return frozenset(_whole(_under(held, rest)) for held in found.get(root, ()))


def _under(held: str, rest: str) -> str:
    """The path ``rest`` under what a local holds (``held``: a path, or ``"*"``: the object)."""
    return rest if held == "*" else f"{held}.{rest}" if rest else held


def _whole(path: str) -> str:
    """``path`` cut above a computed attribute (``a`` of ``a.*``); ``"*"`` where nothing is left."""
    parts = path.split(".") if path else []
    kept = parts[: parts.index("*")] if "*" in parts else parts
    return ".".join(kept) or "*"
