"""How each planned call's fork is read at its joins, and the locals the caller gains for it.

A join reads the same guard value as the fork: the guard as spelled at the call, or a flag the call sets
(``<call>_forked``) where only some paths reach a fork or the caller may change what the guard reads in
between. Arguments computed by an expression are bound to fresh names just before the call, so they are
computed on the caller's stream; every generated local is fresh against the caller's names (:class:`Flags`).
"""

from __future__ import annotations

import ast

import attrs

from codegen.frontend.signature import Tensorness
from codegen.lower.flow.analyze import Analysis
from codegen.lower.flow.arguments import Argument
from codegen.lower.flow.caller_facts import SiteSync, any_may
from codegen.lower.flow.item_stores import container_item
from codegen.lower.flow.sites import Site
from codegen.lower.flow.stability import Stability
from codegen.lower.naming import snake
from codegen.lower.plan import Cond

__all__ = ["Flags", "computed", "hoisted_arguments", "param_of", "short_name", "site_sync"]


@attrs.define(eq=False)
class Flags:
    """The generated locals of one caller: flags and bound arguments, fresh against ``taken``."""

    taken: set[str]

    def fresh(self, wanted: str) -> str:
        name, n = wanted, 0
        while name in self.taken:
            n += 1
            name = f"{wanted}_{n}"
        self.taken.add(name)
        return name


def hoisted_arguments(site: Site, flags: Flags) -> list[tuple[int | str, str]]:
    """The arguments computed by an expression (``self.latent(h)``, ``x * 2``): bound to fresh names just before
    the call, in argument order, so that they are computed on the caller's stream, not the call's; and an item of
    a container the caller owns (``xs[i]``, ``item_stores.py``) or an object taken from one: the item is kept
    alive, not the whole container nor its index."""
    hoisted = [a for a in site.args if computed(a.node) or container_item(a.node) or _object_item(site, a)]
    return [(a.slot, flags.fresh(_param_name(site, a.slot))) for a in hoisted]


def _object_item(site: Site, argument: Argument) -> bool:
    """An item or attribute (``objs[i]``, ``h.box``) given to a parameter annotated as another class (kept only
    because the caller changes the object, ``changed_objects.py``): an object, not a view of a tensor, so it is kept
    alone."""
    name = param_of(site, argument.slot)
    param = site.callee.signature.get(name) if name else None  # type: ignore[attr-defined]
    item = isinstance(argument.node, (ast.Subscript, ast.Attribute))
    return item and param is not None and param.tensor is Tensorness.NO


def computed(node: ast.expr) -> bool:
    """Anything but a name, a constant, or attributes and constant indexes of one (no op runs to make it)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Constant, ast.Name)):
            return True
        node = node.value
    return not isinstance(node, (ast.Name, ast.Constant))


def site_sync(site: Site, result: Analysis, stability: Stability, flags: Flags, since: int) -> SiteSync:
    """How the call's fork is read at its joins: its guard as spelled at the call, or a flag set there where only
    some paths fork or the guard may change before the joins; the arguments bound before it."""
    hoisted = hoisted_arguments(site, flags)
    text = _guard_text(site, hoisted, flags)
    flag = flags.fresh(f"{short_name(site)}_forked") if _needs_flag(site, result, stability, text, since) else None
    dynamic = site.guard.dynamic
    return SiteSync(
        cond=Cond.of(flag) if flag else Cond.of(text) if dynamic else None,
        flag=flag,
        guard_text=text if dynamic else None,
        hoisted=tuple(sorted(hoisted, key=lambda h: _order(site.call.call, h[0]))),
    )


def _guard_text(site: Site, hoisted: list[tuple[int | str, str]], flags: Flags) -> str | None:
    """The guard as the call's joins read it: as spelled, or read through the name the argument expression it
    reads is bound to before the call (added to ``hoisted``)."""
    guard = site.guard
    if guard.hoist is None:
        return guard.expr
    slot = _slot_of(site.call.call, guard.hoist)
    name = next((n for s, n in hoisted if s == slot), None) or flags.fresh(_param_name(site, slot))
    if (slot, name) not in hoisted:
        hoisted.append((slot, name))
    return f"{name}{guard.rest}"


def _needs_flag(site: Site, result: Analysis, stability: Stability, text: str | None, since: int) -> bool:
    """Only some paths fork, or the guard may read another value at the joins than at the call."""
    guard = site.guard
    if any_may(result, site.index):
        return True
    flips = bool(getattr(site.callee, "flips_guard", False))
    return guard.dynamic and guard.hoist is None and (flips or not stability.stable(text or "", since))


def short_name(site: Site) -> str:
    """The callee's name for the flags of its call (its class's for a ``forward``), in snake case."""
    qualname = site.callee.qualname  # type: ignore[attr-defined]
    owner, _, name = qualname.rpartition(".")
    base = owner if name == "forward" and owner else name
    return snake(base)


def param_of(site: Site, slot: int | str) -> str | None:
    """The callee's parameter an argument slot binds: a keyword's name, a position's parameter (None past the
    end)."""
    if isinstance(slot, str):
        return slot
    params = site.callee.signature.params  # type: ignore[attr-defined]
    position = slot - (1 if site.call.resolved.explicit_receiver else 0)
    return params[position].name if 0 <= position < len(params) else None


def _param_name(site: Site, slot: int | str) -> str:
    return "kwargs" if slot == "**" else param_of(site, slot) or "arg"


def _slot_of(call: ast.Call, node: ast.expr) -> int | str:
    for i, arg in enumerate(call.args):
        if arg is node:
            return i
    return next(k.arg for k in call.keywords if k.value is node and k.arg is not None)


def _order(call: ast.Call, slot: int | str) -> int:
    if isinstance(slot, int):
        return slot
    return len(call.args) + next((i for i, k in enumerate(call.keywords) if (k.arg or "**") == slot), 0)
